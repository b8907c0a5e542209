import Canopy
import CanopyCore
import CanopyWire

extension Database {
    /// One attempt of a multi-location transaction against a server (loop thread): the block runs on
    /// the cache once every location it reads is synced (else those are listened to and it runs
    /// again); its writes are applied locally and sent as one `tm` merge with the hash of what it
    /// read at each location. The server applies it only if none changed; on `datastale` the
    /// attempt is reverted and the block runs again on the newer data, at most 25 times. Fails while
    /// offline. `held`: the listens taken for its reads, released when it ends.
    func remoteTransaction(_ body: TransactionBody, remote: RemoteSync, attempt: Int, held: Set<DatabasePath>) {
        let fail = { (error: any Error) in
            for path in held { remote.release(path) }
            body.fail(error)
        }
        guard remote.isConnected else {
            fail(DatabaseError(.disconnected, "runTransaction failed: the client is offline; a transaction needs the server."))
            return
        }
        let (transaction, outcome) = self.runBlock(body)
        let committed: (DatabaseError?) -> Void
        switch outcome {
        case .success(let report): committed = report
        case .failure(let error):
            fail(error)
            return
        }
        let unsynced = Set(transaction.reads.filter { !held.contains($0) && !remote.isComplete($0) })
        if !unsynced.isEmpty {
            // It read data the cache does not hold: listen there, then run it again on the server's data.
            var remaining = unsynced.count
            var failure: DatabaseError?
            for path in unsynced {
                remote.acquire(path) { [self] result in
                    if case .failure(let error) = result, failure == nil { failure = error }
                    remaining -= 1
                    guard remaining == 0 else { return }
                    let all = held.union(unsynced)
                    if let failure {
                        for path in all { remote.release(path) }
                        body.fail(failure)
                    } else {
                        self.remoteTransaction(body, remote: remote, attempt: attempt, held: all)
                    }
                }
            }
            return
        }
        let finish = { (error: DatabaseError?) in
            for path in held { remote.release(path) }
            committed(error)
        }
        guard !transaction.writes.isEmpty else {
            finish(nil)
            return
        }
        var reads: [(path: DatabasePath, hash: String)] = []
        for path in Set(transaction.reads).sorted(by: <) { reads.append((path, self.core.engine.node(at: path).wireHash)) }
        guard let write = self.core.composed(transaction.writes) else {
            finish(nil)
            return
        }
        if write.path.isRoot && write.entries.contains(where: { $0.path.isEmpty }) && !reads.isEmpty {
            fail(DatabaseError(.invalidOperation, "runTransaction failed: against a server a transaction cannot replace the root."))
            return
        }
        // The answer comes on the loop thread, like this attempt.
        let answered: (DatabaseError?) -> Void = { [self] error in
            if let error, error.code == .dataStale {
                guard attempt < RemoteSync.maxTransactionAttempts else {
                    fail(
                        DatabaseError(
                            .maxRetries, "runTransaction failed: the data it read changed on the server \(attempt) times in a row."))
                    return
                }
                self.remoteTransaction(body, remote: remote, attempt: attempt + 1, held: held)
                return
            }
            finish(error)
        }
        let carried = LoopCallback(answered)
        remote.localWrite(write, readHashes: reads) { error in carried.value(error) }
    }
}
