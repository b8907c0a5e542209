import CanopyCore

extension Database {
    /// Runs a transaction over any number of locations: `block` reads what it needs with
    /// ``Transaction/getData(_:)``, then writes any locations with ``Transaction/setValue(_:for:)``,
    /// ``Transaction/updateChildValues(_:for:)-([AnyHashable:Any],_)`` and ``Transaction/removeValue(for:)``; its return value
    /// is returned here once the writes are committed.
    ///
    /// All or nothing: the writes are committed together as one write (one journal record; observers see
    /// all of them or none), and a `block` that throws aborts the transaction with nothing written; its
    /// error is rethrown here as it was thrown. Reading after writing is an error.
    ///
    /// On this (embedded) database the block runs once, on the loop thread, with no other write
    /// between its reads and its commit, so transactions from any number of threads never lose an
    /// update. Write `block` so that it may run more than once all the same: a transaction against a
    /// server (`Database(url:)`, module `CanopyRemote`) runs it optimistically, checks every location
    /// it read at commit, and runs it again on a conflict, up to 25 times, failing while offline. So the block must not change app state (assign results to your variables after this
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
    /// - Throws: The block's error; `DatabaseError` for an invalid write inside it (as the write
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
    @inlinable
    public func runTransaction<T>(_ block: @escaping (Transaction) throws -> T, completion: @escaping (Result<T, any Error>) -> Void) {
        // Only closures here, compiled for the caller's `T` (inlinable: no generic metadata looked
        // up on every transaction); the rest runs without the generic type.
        // One closure for both outcomes: one allocation here, and one release on the loop.
        self.startTransaction(
            TransactionBody { step in
                switch step {
                case .run(let transaction):
                    let value = try block(transaction)
                    return { error in completion(error.map { .failure($0) } ?? .success(value)) }
                case .fail(let error):
                    completion(.failure(error))
                    return { _ in }
                }
            })
    }

    /// Queues the transaction on the loop; its outcome is reported on the loop thread (on the
    /// calling thread when the database is closed).
    @usableFromInline
    func startTransaction(_ body: TransactionBody) {
        let core = self.core
        let accepted = core.perform { [self] in core.backend.runTransaction(body, in: self) }
        if !accepted { body.fail(DatabaseCore.closedError) }
    }

    /// Runs the block in a new ``Transaction``, which ends when it returns (loop thread): what
    /// reports its value once committed (given the commit's error, if any), or the error it threw.
    package func runBlock(_ body: TransactionBody) -> (Transaction, Result<(DatabaseError?) -> Void, any Error>) {
        let transaction = Transaction(database: self)
        defer { transaction.finish() }
        do {
            return (transaction, .success(try body.run(transaction)))
        } catch {
            return (transaction, .failure(error))
        }
    }
}

/// A ``Database/runTransaction(_:completion:)`` block with its value's type erased, in one closure:
/// given `.run(transaction)` it runs the block and returns what reports its value once the commit
/// is done (with the commit's error, if any); given `.fail(error)` it reports an error that ended it
/// before (the block's, or the database closed).
// @unchecked Sendable: created on the calling thread and used only on the loop thread after that
// (or on the calling thread when the database is closed, and then never on the loop).
@usableFromInline
package struct TransactionBody: @unchecked Sendable {
    @usableFromInline
    enum Step {
        case run(Transaction)
        case fail(any Error)
    }

    let step: (Step) throws -> (DatabaseError?) -> Void

    @usableFromInline
    init(_ step: @escaping (Step) throws -> (DatabaseError?) -> Void) {
        self.step = step
    }

    /// Runs the block in `transaction`; returns what reports its value once committed.
    func run(_ transaction: Transaction) throws -> (DatabaseError?) -> Void { try self.step(.run(transaction)) }

    /// Reports `error`, which ended the transaction before its commit.
    package func fail(_ error: any Error) { _ = try? self.step(.fail(error)) }
}
