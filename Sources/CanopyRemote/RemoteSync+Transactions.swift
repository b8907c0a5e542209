import Canopy
import CanopyConnection
import CanopyCore
import CanopyWire
import Logging

extension RemoteSync {
    /// The most attempts a transaction makes before failing with `maxRetries` (the SDKs' 25).
    static let maxTransactionAttempts = 25

    /// Runs a transaction against the server with the data-hash protocol: once the location is
    /// complete in the cache, `update` runs on the data there; the result is applied locally (its
    /// events fire) and sent with the hash of the data it was computed from. When the server's data
    /// differed (`datastale`), the attempt is reverted and `update` runs again on the newer data, up
    /// to 25 times.
    func transaction(
        at path: DatabasePath, update: @escaping (MutableData.Store) throws(DatabaseError) -> Node?,
        completion: @escaping (DatabaseError?, Bool, Node) -> Void
    ) {
        self.acquire(path) { [weak self] result in
            guard let self else { return }
            switch result {
            case .failure(let error):
                self.release(path)
                completion(error, false, .empty)
            case .success:
                self.attemptTransaction(at: path, attempt: 1, update: update) { error, committed, node in
                    self.release(path)
                    completion(error, committed, node)
                }
            }
        }
    }

    private func attemptTransaction(
        at path: DatabasePath, attempt: Int, update: @escaping (MutableData.Store) throws(DatabaseError) -> Node?,
        completion: @escaping (DatabaseError?, Bool, Node) -> Void
    ) {
        let current = self.core.engine.node(at: path)
        let store = MutableData.Store(node: current, location: path, now: self.serverNow)
        let committed: Node?
        do throws(DatabaseError) {
            committed = try update(store)
        } catch {
            completion(error, false, current)
            return
        }
        guard let committed else {
            completion(nil, false, current)
            return
        }
        // The completion runs on the loop thread, like this function.
        let carried = LoopCallback((update, completion))
        self.localWrite(.set(path, WriteValue(node: committed)), hash: current.wireHash) { [weak self] error in
            guard let self else { return }
            let (update, completion) = carried.value
            if let error, error.code == .dataStale {
                guard attempt < Self.maxTransactionAttempts else {
                    completion(
                        DatabaseError(
                            .maxRetries,
                            "The transaction at \(path.string) failed: the data changed on the server \(attempt) times in a row."),
                        false, self.core.engine.node(at: path))
                    return
                }
                self.attemptTransaction(at: path, attempt: attempt + 1, update: update, completion: completion)
                return
            }
            completion(error, error == nil, self.core.engine.node(at: path))
        }
    }
}
