import Synchronization

/// The server's long-poll sessions by their transport id (`id`). They are SDK connections too:
/// ``WireSessions`` counts them and ends them at shutdown.
final class LongPollSessions: Sendable {
    private let sessions = Mutex<[String: LongPollSession]>([:])

    func add(_ session: LongPollSession) {
        self.sessions.withLock { $0[session.id] = session }
    }

    func remove(_ session: LongPollSession) {
        self.sessions.withLock { sessions in
            if sessions[session.id] === session { sessions[session.id] = nil }
        }
    }

    func session(_ id: String) -> LongPollSession? {
        self.sessions.withLock { $0[id] }
    }

    /// The number of open sessions.
    var count: Int { self.sessions.withLock { $0.count } }
}
