import Synchronization

/// The server's open SDK connections by session id: a reconnecting client names its previous
/// session (`ls`), whose onDisconnect writes then run at once.
final class WireSessions: Sendable {
    private let sessions = Mutex<[String: WireSession]>([:])
    private let accepting = Atomic<Bool>(true)

    func add(_ session: WireSession) {
        self.sessions.withLock { $0[session.sessionID] = session }
    }

    func remove(_ session: WireSession) {
        self.sessions.withLock { sessions in
            if sessions[session.sessionID] === session { sessions[session.sessionID] = nil }
        }
    }

    func session(_ id: String) -> WireSession? {
        self.sessions.withLock { $0[id] }
    }

    /// Closes every connection and refuses new ones (server shutdown): clients reconnect later.
    func closeAll() {
        let all = self.sessions.withLock { sessions in
            self.accepting.store(false, ordering: .releasing)
            return Array(sessions.values)
        }
        for session in all { session.disconnect() }
    }

    /// Whether new connections are served.
    var isAccepting: Bool { self.accepting.load(ordering: .acquiring) }

    /// The number of open connections.
    var count: Int { self.sessions.withLock { $0.count } }
}
