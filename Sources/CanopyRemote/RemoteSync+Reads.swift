import Canopy
import CanopyConnection
import CanopyCore
import CanopyLoop
import CanopyWire
import Logging

extension RemoteSync {
    /// `getData()`: the cache when a live listen covers the location (or the query's own live
    /// listen covers the query); else the server's answer (which also refreshes the cache); else,
    /// offline or past the request timeout, the cache when it holds data there. `done` runs
    /// once, on the loop thread.
    func get(at path: DatabasePath, params: QueryParams, _ done: @escaping (Result<Node, DatabaseError>) -> Void) {
        if path.isInfo || self.isLive(path) || (params.isFiltered && self.queries[QueryKey(path: path, params: params)]?.isLive == true) {
            done(.success(self.core.engine(for: path).queryResult(at: path, params: params)))
            return
        }
        let answered = Flag()
        let fallback = { [weak self] (reason: String) in
            guard !answered.isSet, let self else { return }
            answered.isSet = true
            let cached = self.core.engine.queryResult(at: path, params: params)
            if !cached.isEmpty || self.isComplete(path) {
                done(.success(cached))
            } else {
                done(
                    .failure(
                        DatabaseError(.disconnected, "getData at \(path.string) failed: \(reason), and the cache holds no data there.")))
            }
        }
        guard !self.isOfflineByRequest else {
            fallback("the client is offline (goOffline())")
            return
        }
        // Not connected yet (or reconnecting): the read waits for the connection, within the timeout.
        let request = Flag.Value()
        let timer = self.core.loop.schedule(after: self.options.requestTimeout) { [weak self] in
            self?.forget(request.id)
            fallback("the server did not answer within \(self?.options.requestTimeout ?? .zero)")
        }
        request.id = self.sendReliably({ .get(id: $0, path: path, query: params) }) { [weak self] outcome in
            timer.cancel()
            guard !answered.isSet, let self else { return }
            switch outcome {
            case .ok(let node):
                answered.isSet = true
                if params == .default {
                    self.serverPut(node, at: path)
                    done(.success(self.core.engine.queryResult(at: path, params: params)))
                } else {
                    done(.success(node))
                }
            case .failed(let status, let message):
                answered.isSet = true
                done(.failure(DatabaseError(serverStatus: status, message: message, path: path)))
            case .disconnected:
                fallback("the connection closed before the server answered")
            case .closed:
                answered.isSet = true
                done(.failure(DatabaseError(.closed, "The database was closed.")))
            }
        }
    }
}

/// A one-way switch shared by closures on the loop thread.
final class Flag {
    var isSet = false

    /// A request id shared the same way.
    final class Value {
        var id: UInt64 = 0
    }
}
