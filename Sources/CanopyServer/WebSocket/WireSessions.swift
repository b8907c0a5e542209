import Synchronization

/// The server's open SDK connections by session id: a reconnecting client names its previous
/// session (`ls`), whose onDisconnect writes then run at once.
final class WireSessions: Sendable {
    private struct Live {
        /// Connections started and not yet through their end (listens removed, onDisconnect
        /// writes run).
        var count = 0
        /// ``waitUntilEnded()`` callers.
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let sessions = Mutex<[String: WireSession]>([:])
    private let live = Mutex(Live())
    private let accepting = Atomic<Bool>(true)

    /// A connection starts; `false` once the server is shutting down (``closeAll()`` has run:
    /// the connection is to be closed, and does not count).
    func add(_ session: WireSession) -> Bool {
        let added = self.sessions.withLock { sessions in
            guard self.accepting.load(ordering: .acquiring) else { return false }
            sessions[session.sessionID] = session
            return true
        }
        if added { self.live.withLock { $0.count += 1 } }
        return added
    }

    /// A connection closed (it is no longer found by its session id).
    func remove(_ session: WireSession) {
        self.sessions.withLock { sessions in
            if sessions[session.sessionID] === session { sessions[session.sessionID] = nil }
        }
    }

    /// A closed connection finished its end: its listens are gone and its onDisconnect writes ran.
    func ended() {
        let waiters = self.live.withLock { live -> [CheckedContinuation<Void, Never>] in
            live.count -= 1
            guard live.count == 0 else { return [] }
            defer { live.waiters = [] }
            return live.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once every connection that started has ended (after ``closeAll()``: the server's
    /// databases close only after the connections' onDisconnect writes).
    func waitUntilEnded() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = self.live.withLock { live -> Bool in
                if live.count == 0 { return true }
                live.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
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

    /// Closes the connections to namespace `name` (it is no longer served here): their clients
    /// reconnect and are redirected to its new leader.
    func disconnect(namespace name: String) {
        let sessions = self.sessions.withLock { $0.values.filter { $0.namespaceName == name } }
        for session in sessions { session.disconnect() }
    }

    /// Whether new connections are served.
    var isAccepting: Bool { self.accepting.load(ordering: .acquiring) }

    /// The number of open connections.
    var count: Int { self.sessions.withLock { $0.count } }
}
