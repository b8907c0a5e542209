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
    /// The namespace the connection named (`ns`).
    let namespaceName: String
    /// Where its messages go (the transport's side of the session).
    let outbox: any WireSink
    /// Closes the connection (server shutdown).
    let disconnect: @Sendable () -> Void
    /// onDisconnect writes, in the order they were asked for, each with the identity that asked
    /// (it is judged again, as that identity, when it runs); `nil` once they ran.
    /// `registration`: in a cluster, the write's row in PostgreSQL (a new leader runs it if this
    /// node dies first).
    private let closeWrites = Mutex<[(path: DatabasePath, write: WriteOperation, identity: Identity, registration: Int64?)]?>([])
    /// Who the connection acts as: set by `auth`/`gauth` (and the upgrade's bearer token),
    /// cleared by `unauth`.
    private let currentIdentity: Mutex<Identity>
    /// Opened by the first request allowed to read or write, not by the connection itself: a
    /// client without the admin token cannot make the server open a database.
    private let opened = Mutex<Namespace?>(nil)
    /// The listens of the connection (used on its namespace's loop thread: see ``WireListen``).
    let listens = Mutex<Set<WireListen>>([])

    /// The timer that ends a user token's identity when the token expires.
    let expiryTimer = Mutex<Task<Void, Never>?>(nil)
    /// The executor the expiry timer runs on (the server's, see `ServerState.taskExecutor`).
    let taskExecutor: (any TaskExecutor)?

    init(
        sessionID: String, namespaceName: String, outbox: any WireSink, identity: Identity = .anonymous,
        taskExecutor: (any TaskExecutor)? = nil, disconnect: @escaping @Sendable () -> Void
    ) {
        self.taskExecutor = taskExecutor
        self.id = SubscriberID.next()
        self.currentIdentity = Mutex(identity)
        self.sessionID = sessionID
        self.namespaceName = namespaceName
        self.outbox = outbox
        self.disconnect = disconnect
    }

    /// Who the connection acts as now.
    var identity: Identity {
        get { self.currentIdentity.withLock { $0 } }
        set { self.currentIdentity.withLock { $0 = newValue } }
    }

    /// Sets the identity; returns the one it replaced.
    func swapIdentity(to identity: Identity) -> Identity {
        self.currentIdentity.withLock { current in
            defer { current = identity }
            return current
        }
    }

    /// Sets `identity` only if the identity is still `expected` (a timer must not undo a newer `auth`).
    func replaceIdentity(_ expected: Identity, with identity: Identity) -> Bool {
        self.currentIdentity.withLock { current in
            guard current == expected else { return false }
            current = identity
            return true
        }
    }

    /// The namespace, once a request opened it.
    var namespace: Namespace? { self.opened.withLock { $0 } }

    /// The namespace, opened on first use.
    ///
    /// - Throws: ``RESTError`` when it cannot be opened (one namespace too many, the server
    ///   shutting down, a damaged database).
    func openNamespace(in store: NamespaceStore, create: Bool) async throws -> Namespace {
        if let namespace = self.namespace { return namespace }
        let namespace = try await store.namespace(self.namespaceName, create: create)
        self.opened.withLock { $0 = namespace }
        return namespace
    }

    /// Records a write to run when the connection closes; `false` once they ran.
    func addCloseWrite(_ write: WriteOperation, identity: Identity, registration: Int64? = nil) -> Bool {
        self.closeWrites.withLock { writes in
            guard writes != nil else { return false }
            writes!.append((write.path, write, identity, registration))
            return true
        }
    }

    /// Forgets the close-time writes at and below `path` (`oc`); returns the cluster
    /// registrations of those it forgot.
    func cancelCloseWrites(at path: DatabasePath) -> [Int64] {
        self.closeWrites.withLock { writes in
            let registrations = writes?.filter { path.contains($0.path) }.compactMap(\.registration) ?? []
            writes?.removeAll { path.contains($0.path) }
            return registrations
        }
    }

    /// Takes the close-time writes, once: the connection closed, or a reconnecting client named
    /// this connection as its previous one (`ls`).
    func takeCloseWrites() -> [(write: WriteOperation, identity: Identity, registration: Int64?)] {
        self.closeWrites.withLock { writes in
            defer { writes = nil }
            return writes?.map { ($0.write, $0.identity, $0.registration) } ?? []
        }
    }
}
