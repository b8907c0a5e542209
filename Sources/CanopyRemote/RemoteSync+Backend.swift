import Canopy
import CanopyCore
import Synchronization

/// A client of a server as the database's backend: writes go through the cache to the server,
/// observers wait for their location's data, reads may ask the server.
extension RemoteSync: DatabaseBackend {
    var isRemote: Bool { true }

    /// Applies the write to the cache and sends it; its server values are resolved at the server's
    /// estimated time, and no trigger runs on a client (`now` and `applied` are not used).
    func apply(
        _ write: WriteOperation, now: Int64?, completion: (@Sendable (DatabaseError?) -> Void)?, applied: (() -> Void)?
    ) {
        self.localWrite(write, completion: completion)
    }

    /// Composing overlapping writes needs the data under them, which a cache may not hold: against
    /// a server they go as consecutive writes, in order; the completion reports the first failure
    /// once all are answered.
    func commitOverlapping(_ writes: [WriteOperation], completion: @escaping @Sendable (DatabaseError?) -> Void) {
        let remaining = Mutex((count: writes.count, error: DatabaseError?.none))
        for write in writes {
            self.core.apply(write) { error in
                let done: (Bool, DatabaseError?) = remaining.withLock { state in
                    state.count -= 1
                    if state.error == nil { state.error = error }
                    return (state.count == 0, state.error)
                }
                if done.0 { completion(done.1) }
            }
        }
    }

    /// The server checks the hash of every location a transaction read.
    var tracksTransactionReads: Bool { true }

    func runTransaction(_ body: TransactionBody, in database: Database) {
        database.remoteTransaction(body, remote: self, attempt: 1, held: [])
    }

    func transaction(
        at path: DatabasePath, in database: Database,
        update: @escaping @Sendable (MutableData) throws(DatabaseError) -> TransactionResult,
        completion: @escaping @Sendable (DatabaseError?, Bool, DataSnapshot?) -> Void
    ) {
        self.transaction(at: path) { store throws(DatabaseError) in
            let result = try update(MutableData(store: store, path: []))
            if let error = store.error { throw error }
            guard let data = result.data else { return nil }
            return data.store === store ? store.node : data.store.node
        } completion: { error, committed, node in
            completion(error, committed, DataSnapshot(node: node, path: path, database: database))
        }
    }

    /// Data not confirmed on the current connection (no live listen covers it) is the cache's.
    func isFromCache(_ path: DatabasePath) -> Bool { !self.isLive(path) && !self.hasLiveQuery(at: path) }

    var isSettled: Bool {
        self.isConnected && self.pending.isEmpty && self.inFlight.isEmpty && self.outbox.isEmpty
            && self.listens.values.allSatisfy { $0.users == 0 || $0.isLive }
            && self.queries.values.allSatisfy { $0.users == 0 || $0.isLive }
    }
}
