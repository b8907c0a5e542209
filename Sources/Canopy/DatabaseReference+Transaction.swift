import CanopyCore

extension DatabaseReference {
    /// ``runTransactionBlock(_:)`` with a completion called on the loop thread with
    /// `(error, committed, snapshot)`: the committed data, or the current data when the block
    /// aborted; `nil` starts the transaction and waits for nothing. An invalid value set in the block
    /// fails the transaction with that error.
    ///
    /// - Complexity: O(*d* log *n*) on the loop at depth *d* to read and to commit, plus the block's own
    ///   work, the commit's events (as ``setValue(_:)``) and, on a database opened at a path, O(*s*) to
    ///   journal the *s* nodes of the committed value. The block's data shares storage with the tree: only
    ///   what it changes is copied.
    public func runTransactionBlock(
        _ block: @escaping (MutableData) -> TransactionResult,
        andCompletionBlock completionBlock: (((any Error)?, Bool, DataSnapshot?) -> Void)?
    ) {
        self.runTransactionBlock(block, andCompletionBlock: completionBlock, withLocalEvents: true)
    }

    /// ``runTransactionBlock(_:andCompletionBlock:)``. `withLocalEvents` is accepted for Firebase
    /// compatibility: an embedded database commits at once, so events always follow the commit.
    ///
    /// - Complexity: O(*d* log *n*) on the loop at depth *d* to read and to commit, plus the block's own
    ///   work, the commit's events (as ``setValue(_:)``) and, on a database opened at a path, O(*s*) to
    ///   journal the *s* nodes of the committed value. The block's data shares storage with the tree: only
    ///   what it changes is copied.
    public func runTransactionBlock(
        _ block: @escaping (MutableData) -> TransactionResult,
        andCompletionBlock completionBlock: (((any Error)?, Bool, DataSnapshot?) -> Void)?,
        withLocalEvents localEvents: Bool
    ) {
        let update = LoopCallback(block)
        let completion = LoopCallback(completionBlock)
        self.startTransaction({ data throws(DatabaseError) in update.value(data) }) { error, committed, snapshot in
            completion.value?(error, committed, snapshot)
        }
    }

    /// Atomically reads and replaces the data here.
    ///
    /// `block` receives the current data (empty when there is none) and returns
    /// `.success(withValue:)` to commit what it left in the `MutableData`, or `.abort()`. It runs on
    /// the database's loop thread with no other write in between its read and its write, so
    /// transactions from any number of threads never lose an update. Keep it fast and free of side
    /// effects: every other write and observer waits while it runs.
    ///
    /// Returns once the transaction completes, with whether it committed and the resulting (or, when
    /// aborted, current) data.
    ///
    /// ```swift
    /// try await postRef.runTransactionBlock { currentData in
    ///     var post = currentData.value as? [String: Any] ?? [:]
    ///     post["starCount"] = (post["starCount"] as? Int ?? 0) + 1
    ///     currentData.value = post
    ///     return .success(withValue: currentData)
    /// }
    /// ```
    ///
    /// - Complexity: O(*d* log *n*) on the loop at depth *d* to read and to commit, plus the block's own
    ///   work, the commit's events (as ``setValue(_:)``) and, on a database opened at a path, O(*s*) to
    ///   journal the *s* nodes of the committed value. The block's data shares storage with the tree: only
    ///   what it changes is copied.
    @discardableResult
    public func runTransactionBlock(_ block: @escaping (MutableData) -> TransactionResult) async throws -> (
        committed: Bool, snapshot: DataSnapshot
    ) {
        let update = LoopCallback(block)
        return try await self.runTransaction { data throws(DatabaseError) in update.value(data) }
    }

    /// A transaction whose block may throw: a thrown error aborts it and is rethrown here (wrapped
    /// in a `DatabaseError` with code `.userCodeFailed` unless it is one).
    ///
    /// - Complexity: O(*d* log *n*) on the loop at depth *d* to read and to commit, plus the block's own
    ///   work, the commit's events (as ``setValue(_:)``) and, on a database opened at a path, O(*s*) to
    ///   journal the *s* nodes of the committed value. The block's data shares storage with the tree: only
    ///   what it changes is copied.
    @discardableResult
    public func runTransaction(_ block: @escaping (MutableData) throws -> TransactionResult) async throws -> (
        committed: Bool, snapshot: DataSnapshot
    ) {
        let update = LoopCallback(block)
        return try await withCheckedThrowingContinuation { continuation in
            self.startTransaction({ data throws(DatabaseError) in
                do {
                    return try update.value(data)
                } catch let error as DatabaseError {
                    throw error
                } catch {
                    throw DatabaseError(.userCodeFailed, "The transaction block threw: \(error)")
                }
            }) { error, committed, snapshot in
                if let error {
                    continuation.resume(throwing: error)
                } else if let snapshot {
                    continuation.resume(returning: (committed, snapshot))
                }
            }
        }
    }

    /// Queues the transaction on the loop. `completion` runs on the loop thread.
    private func startTransaction(
        _ update: @escaping @Sendable (MutableData) throws(DatabaseError) -> TransactionResult,
        completion: @escaping @Sendable (DatabaseError?, Bool, DataSnapshot?) -> Void
    ) {
        do throws(DatabaseError) {
            try WriteBuilder.checkWritable(self, function: "transaction")
        } catch {
            if !self.core.perform({ completion(error, false, nil) }) { completion(error, false, nil) }
            return
        }
        let core = self.core
        let path = self.path
        let database = self.database
        // Transactions and writes run in the order they were issued (per thread; one queue), so a
        // set issued after a transaction never finds it waiting (see *Transactions*): it
        // overwrites the committed value, and a set issued before it is what the transaction reads.
        let accepted = core.perform {
            core.backend.transaction(at: path, in: database, update: update, completion: completion)
        }
        if !accepted { completion(DatabaseCore.closedError, false, nil) }
    }
}
