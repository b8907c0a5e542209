import CanopyCore

extension EmbeddedBackend {
    /// Nothing is checked at commit: the block runs with no other write between its reads and it.
    var tracksTransactionReads: Bool { false }

    /// Runs the block once, then commits its writes as one write.
    func runTransaction(_ body: TransactionBody, in database: Database) {
        let (transaction, outcome) = database.runBlock(body)
        guard case .success(let committed) = outcome else {
            if case .failure(let error) = outcome { body.fail(error) }
            return
        }
        // The transaction carries the report: the completion then captures one reference.
        transaction.report = committed
        let finished = LoopCallback(transaction)
        self.core.commit(transaction.writes) { error in finished.value.report?(error) }
    }

    /// Runs `update` once on the data at `path` and applies its result.
    func transaction(
        at path: DatabasePath, in database: Database,
        update: @escaping @Sendable (MutableData) throws(DatabaseError) -> TransactionResult,
        completion: @escaping @Sendable (DatabaseError?, Bool, DataSnapshot?) -> Void
    ) {
        let core = self.core
        let current = core.engine.node(at: path)
        let store = MutableData.Store(node: current, location: path, now: core.clock())
        let result: TransactionResult
        do throws(DatabaseError) {
            result = try update(MutableData(store: store, path: []))
        } catch {
            completion(error, false, DataSnapshot(node: current, path: path, database: database))
            return
        }
        if let error = store.error {
            completion(error, false, DataSnapshot(node: current, path: path, database: database))
            return
        }
        guard let data = result.data else {
            completion(nil, false, DataSnapshot(node: current, path: path, database: database))
            return
        }
        let committed = data.store === store ? store.node : data.store.node
        core.apply(.set(path, WriteValue(node: committed))) { error in
            let snapshot = DataSnapshot(
                node: core.engine.node(at: path), path: path, database: database, metadata: core.metadata(at: path))
            completion(error, error == nil, snapshot)
        }
    }
}
