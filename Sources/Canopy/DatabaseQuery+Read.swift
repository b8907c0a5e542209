import CanopyCore

extension DatabaseQuery {
    /// Reads the current data of this location or query once. `completion` runs on the loop thread
    /// with the snapshot, or with an error for an invalid query or a closed database.
    ///
    /// - Complexity: O(*d* log *n*) on the loop for a location at depth *d*: the snapshot shares storage,
    ///   nothing is copied. A ranged or limited query adds O(log *n* + *w* log *w*) for a result of *w*
    ///   children when its order is key order or has a live index (an observer's of the same order, or
    ///   ``keepSynced(_:)``), else O(*n* log *n*) to sort the *n* children.
    public func getData(completion: @escaping ((any Error)?, DataSnapshot?) -> Void) {
        let callback = LoopCallback(completion)
        if let error = self.constraintError {
            if !self.core.perform({ callback.value(error, nil) }) { callback.value(error, nil) }
            return
        }
        let accepted = self.readOnce { result in
            switch result {
            case .success(let snapshot): callback.value(nil, snapshot)
            case .failure(let error): callback.value(error, nil)
            }
        }
        if !accepted { callback.value(DatabaseCore.closedError, nil) }
    }

    /// Reads the current data of this location or query once.
    ///
    /// - Complexity: O(*d* log *n*) on the loop for a location at depth *d*: the snapshot shares storage,
    ///   nothing is copied. A ranged or limited query adds O(log *n* + *w* log *w*) for a result of *w*
    ///   children when its order is key order or has a live index (an observer's of the same order, or
    ///   ``keepSynced(_:)``), else O(*n* log *n*) to sort the *n* children.
    public func getData() async throws -> DataSnapshot {
        if let error = self.constraintError { throw error }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<DataSnapshot, any Error>) in
            let accepted = self.readOnce { continuation.resume(with: $0.mapError { $0 as any Error }) }
            if !accepted { continuation.resume(throwing: DatabaseCore.closedError) }
        }
    }

    /// Reads the query's data once, on the loop: from the engine that holds its path, or on a
    /// remote database from the cache or the server (see ``DatabaseBackend/get(at:params:_:)``). `done` runs once, on the
    /// loop thread. Returns `false`, and does not call `done`, when the database is closed.
    private func readOnce(_ done: @escaping @Sendable (Result<DataSnapshot, DatabaseError>) -> Void) -> Bool {
        self.core.perform { [self] in
            self.core.backend.get(at: self.path, params: self.params) { done($0.map { self.snapshot(of: $0) }) }
        }
    }

    /// The query's current result, with its metadata now. Loop thread only.
    func currentSnapshot() -> DataSnapshot {
        self.snapshot(of: self.core.engine(for: self.path).queryResult(at: self.path, params: self.params))
    }

    /// A snapshot of this query's result `node`, with its metadata now. Loop thread only.
    func snapshot(of node: Node) -> DataSnapshot {
        DataSnapshot(
            node: node, path: self.path, index: self.params.index, database: self.database, metadata: self.core.metadata(at: self.path))
    }
}
