import CanopyCore

extension Database {
    /// Runs a transaction over any number of locations: `block` reads what it needs with
    /// ``Transaction/getData(_:)``, then writes any locations with ``Transaction/setValue(_:for:)``,
    /// ``Transaction/updateChildValues(_:for:)`` and ``Transaction/removeValue(for:)``; its return value
    /// is returned here once the writes are committed.
    ///
    /// All or nothing: the writes are committed together as one write (one journal record; observers see
    /// all of them or none), and a `block` that throws aborts the transaction with nothing written; its
    /// error is rethrown here as it was thrown. Reading after writing is an error.
    ///
    /// On this (embedded) database the block runs once, on the loop thread, with no other write
    /// between its reads and its commit, so transactions from any number of threads never lose an
    /// update. Write `block` so that it may run more than once all the same: a transaction against a
    /// remote server (`Database(url:)`, not available yet) will run it optimistically, check every
    /// location it read at commit, and run it again on a conflict, up to a limit, failing while
    /// offline. So the block must not change app state (assign results to your variables after this
    /// returns), and must stay fast: the whole database waits while it runs.
    ///
    /// ```swift
    /// let average = try await db.runTransaction { transaction in
    ///     let restaurant = try transaction.getData(restaurantRef)
    ///     let count = (restaurant.childSnapshot(forPath: "numRatings").value as? Int ?? 0) + 1
    ///     let average = …
    ///     try transaction.setValue(["rating": 5, "userId": uid], for: restaurantRef.child("ratings").childByAutoId())
    ///     try transaction.updateChildValues(["numRatings": count, "avgRating": average], for: restaurantRef)
    ///     return average
    /// }
    /// ```
    ///
    /// - Throws: The block's error; ``DatabaseError`` for an invalid write inside it (as the write
    ///   methods throw it), `.closed` when the database is closed, or the error that failed the commit
    ///   (for example a journal failure).
    /// - Complexity: O(*r* · *d* log *n*) on the loop for *r* reads at depth *d*, plus the block's own work,
    ///   plus the commit: O(*e* · *d*) to compose its *e* written entries into one write (more where they
    ///   overlap), then as ``DatabaseReference/updateChildValues(_:)`` with those entries.
    @discardableResult
    public func runTransaction<T: Sendable>(_ block: @escaping (Transaction) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            self.runTransaction(block) { result in continuation.resume(with: result) }
        }
    }

    /// ``runTransaction(_:)`` reporting its outcome to `completion` on the loop thread: the block's
    /// value once committed, or the error that aborted or failed it.
    ///
    /// Inside a trigger's handler, use this form: the transaction then runs right after the triggers
    /// of the write being handled, before any other write.
    ///
    /// - Complexity: As ``runTransaction(_:)``.
    public func runTransaction<T>(_ block: @escaping (Transaction) throws -> T, completion: @escaping (Result<T, any Error>) -> Void) {
        // One object for the block and its completion: the rest runs without the generic type.
        self.startTransaction(TypedTransactionBody(block: block, completion: completion))
    }

    /// Queues the transaction on the loop; its outcome is reported on the loop thread (on the
    /// calling thread when the database is closed).
    private func startTransaction(_ body: any TransactionBody) {
        let core = self.core
        let accepted = core.perform { [self] in
            if let remote = core.remote {
                self.remoteTransaction(body, remote: remote, attempt: 1, held: [])
                return
            }
            let (transaction, outcome) = self.runBlock(body)
            if case .failure(let error) = outcome {
                body.fail(error)
                return
            }
            core.commit(transaction.writes) { error in body.committed(error) }
        }
        if !accepted { body.fail(DatabaseCore.closedError) }
    }

    /// Runs the block in a new ``Transaction``, which ends when it returns (loop thread): success
    /// (its value kept by `body` for ``TransactionBody/committed(_:)``), or the error it threw.
    func runBlock(_ body: any TransactionBody) -> (Transaction, Result<Void, any Error>) {
        let transaction = Transaction(database: self)
        defer { transaction.finish() }
        do {
            try body.run(transaction)
            return (transaction, .success(()))
        } catch {
            return (transaction, .failure(error))
        }
    }
}

/// A ``Database/runTransaction(_:completion:)`` block and its completion, with the block's value
/// type erased: ``run(_:)`` runs the block and keeps its value, ``committed(_:)`` reports that value
/// once the commit is done (or the commit's error), ``fail(_:)`` reports an error that ended it
/// before (the block's, or the database closed).
protocol TransactionBody: AnyObject, Sendable {
    func run(_ transaction: Transaction) throws
    func committed(_ error: DatabaseError?)
    func fail(_ error: any Error)
}

/// ``TransactionBody`` for a block returning `T`.
// @unchecked Sendable: created on the calling thread and used only on the loop thread after that
// (or on the calling thread when the database is closed, and then never on the loop).
private final class TypedTransactionBody<T>: TransactionBody, @unchecked Sendable {
    private let block: (Transaction) throws -> T
    private let completion: (Result<T, any Error>) -> Void
    /// The value of the block's last run (a remote transaction may run it more than once).
    private var value: T?

    init(block: @escaping (Transaction) throws -> T, completion: @escaping (Result<T, any Error>) -> Void) {
        self.block = block
        self.completion = completion
    }

    func run(_ transaction: Transaction) throws { self.value = try self.block(transaction) }

    func committed(_ error: DatabaseError?) {
        if let error {
            self.completion(.failure(error))
        } else if let value = self.value {
            self.completion(.success(value))
        }
    }

    func fail(_ error: any Error) { self.completion(.failure(error)) }
}
