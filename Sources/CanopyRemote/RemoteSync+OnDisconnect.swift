import Canopy
import CanopyConnection
import CanopyCore
import CanopyWire
import Logging

extension RemoteSync {
    /// Hands an onDisconnect operation to the server (`nil`: cancel those at `path`), now or after
    /// the next reconnect; `done` gets the server's answer.
    func onDisconnect(_ write: WriteOperation?, at path: DatabasePath, done: @escaping (DatabaseError?) -> Void) {
        let request: RequestBuilder
        if let write {
            request = { .write(id: $0, write, onDisconnect: true) }
        } else {
            request = { .onDisconnectCancel(id: $0, path: path) }
        }
        self.sendReliably(request) { outcome in
            switch outcome {
            case .ok: done(nil)
            case .failed(let status, let message): done(DatabaseError(serverStatus: status, message: message, path: path))
            case .disconnected: break
            case .closed: done(DatabaseError(.closed, "The database was closed."))
            }
        }
    }
}
