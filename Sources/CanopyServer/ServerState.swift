import Canopy
import CanopyCore
import Synchronization

/// The state shared by every request of one server.
final class ServerState: Sendable {
    let configuration: ServerConfiguration
    let store: NamespaceStore
    let pushIDs = PushIDGenerator()
    private let streams = Mutex<[UInt64: EventStream]>([:])
    private let acceptingStreams = Atomic<Bool>(true)
    /// `nil` when coalescing is off.
    let wakes: WakeScheduler?
    /// The open SDK connections (WebSockets and long-poll sessions).
    let wireSessions = WireSessions()
    /// The open long-poll sessions, by transport id.
    let longPolls = LongPollSessions()
    /// What `GET /.metrics` reports.
    let metrics = ServerMetrics()
    /// Verifies user tokens; `nil` when the configuration has no keys for them and does not
    /// allow unsigned ones (``ServerConfiguration/verifiesUserTokens``), and when its keys are
    /// bad: ``ServerConfiguration/validate()``, run before the server starts, reports those.
    let verifier: TokenVerifier?
    /// The executor the server's own timers (token expiry) run on: the one it is served on, if
    /// any (see `CanopyServer.serving(on:_:)`); else Swift concurrency's default.
    let taskExecutor = Mutex<(any TaskExecutor)?>(nil)

    init(configuration: ServerConfiguration, store: NamespaceStore) {
        self.configuration = configuration
        self.store = store
        self.wakes = configuration.streamCoalescing > .zero ? WakeScheduler(interval: configuration.streamCoalescing) : nil
        self.verifier = configuration.verifiesUserTokens ? try? TokenVerifier(configuration: configuration) : nil
        store.onEviction { [wireSessions] name in wireSessions.disconnect(namespace: name) }
    }

    func register(_ stream: EventStream) -> Bool {
        self.streams.withLock { streams in
            guard self.acceptingStreams.load(ordering: .acquiring) else { return false }
            streams[stream.id] = stream
            return true
        }
    }

    func unregister(_ stream: EventStream) {
        _ = self.streams.withLock { $0.removeValue(forKey: stream.id) }
    }

    var streamCount: Int { self.streams.withLock { $0.count } }

    func sendKeepAlive() {
        let all = self.streams.withLock { Array($0.values) }
        for stream in all { stream.send(EventRender.keepAlive) }
    }

    /// Ends every stream (their clients see the end of the response) and refuses new ones.
    func closeStreams() {
        let all = self.streams.withLock { streams in
            self.acceptingStreams.store(false, ordering: .releasing)
            return Array(streams.values)
        }
        for stream in all { stream.finish() }
        self.wireSessions.closeAll()
    }
}
