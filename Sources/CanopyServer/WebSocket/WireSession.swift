import Canopy
import CanopyCore
import CanopyWire
import Synchronization

/// One SDK connection: its session id (the hello's `s`), its outgoing queue, and the writes it
/// asked to run when it closes (onDisconnect).
final class WireSession: Sendable {
    let id: UInt64
    /// The id the client sends back as `ls` when it reconnects.
    let sessionID: String
    let namespace: Namespace
    let outbox: WireOutbox
    /// Closes the connection (server shutdown).
    let disconnect: @Sendable () -> Void
    /// onDisconnect writes, in the order they were asked for; `nil` once they ran.
    private let closeWrites = Mutex<[(path: DatabasePath, write: WriteOperation)]?>([])

    private static let nextID = Atomic<UInt64>(1)

    init(sessionID: String, namespace: Namespace, outbox: WireOutbox, disconnect: @escaping @Sendable () -> Void) {
        self.id = Self.nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        self.sessionID = sessionID
        self.namespace = namespace
        self.outbox = outbox
        self.disconnect = disconnect
    }

    /// Records a write to run when the connection closes; `false` once they ran.
    func addCloseWrite(_ write: WriteOperation) -> Bool {
        self.closeWrites.withLock { writes in
            guard writes != nil else { return false }
            writes!.append((write.path, write))
            return true
        }
    }

    /// Forgets the close-time writes at and below `path` (`oc`).
    func cancelCloseWrites(at path: DatabasePath) {
        self.closeWrites.withLock { writes in writes?.removeAll { path.contains($0.path) } }
    }

    /// Takes the close-time writes, once: the connection closed, or a reconnecting client named
    /// this session as its previous one (`ls`).
    func takeCloseWrites() -> [WriteOperation] {
        self.closeWrites.withLock { writes in
            defer { writes = nil }
            return writes?.map(\.write) ?? []
        }
    }
}
