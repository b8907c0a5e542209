import Canopy
import CanopyWire
import Logging
import NIOCore
import NIOWebSocket
import Synchronization

/// One SDK connection carried by long polling: the transport's side of a ``WireConnection``,
/// whose session logic (listens, writes, rules, auth, limits, onDisconnect) is the WebSocket's.
///
/// The client's messages come in segments on its requests (``LongPollSegments``) and go to the
/// connection in order; the connection's messages wait in the ``LongPollOutbox`` for the
/// client's polls. The session ends when the client says it left (`disconn`), stops polling
/// (the outbox's idle checks), is cut off, or the server shuts down; then its listens end and
/// its onDisconnect writes run, as when a WebSocket closes.
final class LongPollSession: WireTransport, Sendable {
    /// The transport's session id (`id`), distinct from the hello's `s`.
    let id: String
    /// The long-poll connection's password (`pw`): a request must name both.
    let password: String
    /// The number of the page's callbacks (`cb` of the start request).
    let callback: String
    let outbox: LongPollOutbox
    let state: ServerState

    private struct Reader {
        var segments: LongPollSegments
        /// A protocol error ended the connection: nothing more is read.
        var failed = false
    }

    private struct Link {
        var connection: WireConnection?
        var closed = false
    }

    private let reader: Mutex<Reader>
    private let link = Mutex(Link())

    init(callback: String, state: ServerState, eventLoop: any EventLoop) {
        let configuration = state.configuration
        self.id = Self.token(length: 16)
        self.password = Self.token(length: 16)
        self.callback = callback
        self.state = state
        let idle = TimeAmount(configuration.longPollTimeout)
        self.outbox = LongPollOutbox(
            limit: configuration.streamBufferBytes, answerLimit: configuration.maxResponseBytes, idle: idle,
            stall: TimeAmount(configuration.slowClientTimeout), hold: Self.hold(idle: idle), eventLoop: eventLoop)
        self.reader = Mutex(Reader(segments: LongPollSegments(maxBytes: configuration.maxBodyBytes / 3 * 4 + 4096)))
    }

    /// How long a poll is held when nothing is queued: under the SDK's 25-second keepalive, and
    /// short enough beside the idle timeout that a live client always polls again in time.
    static func hold(idle: TimeAmount) -> TimeAmount {
        min(.seconds(20), .nanoseconds(idle.nanoseconds / 3))
    }

    /// Starts the SDK connection on namespace `name`: `host` is the one the client used (the
    /// hello names it); `lastSession` the id of the client's previous connection (`ls`). `false` when the
    /// server is shutting down.
    func start(namespace name: String, host: String, lastSession: String?) -> Bool {
        let session = WireSession(
            sessionID: WireUpgrade.newSessionID(), namespaceName: name, outbox: self.outbox,
            taskExecutor: self.state.taskExecutor.withLock { $0 }
        ) { [weak self] in
            self?.close()
        }
        let connection = WireConnection(
            state: self.state, session: session, host: host, previousSession: lastSession, bearer: nil, transport: self)
        self.link.withLock { $0.connection = connection }
        self.state.longPolls.add(self)
        let metrics = self.state.metrics
        self.outbox.start { [weak self] slow in
            if slow { metrics.countSlowClient(.longPoll) }
            self?.close()
        }
        return connection.start()
    }

    /// A request's segments: the messages they complete go to the connection, in order. A
    /// message that cannot be read ends the connection with a protocol error, as on a WebSocket.
    func receive(_ segments: [LongPollSegments.Segment]) {
        guard !segments.isEmpty, let connection = self.link.withLock({ $0.connection }) else { return }
        // Under the lock: two requests in flight at once hand their messages over in order.
        self.reader.withLock { reader in
            guard !reader.failed else { return }
            let texts: [String]
            do {
                texts = try reader.segments.receive(segments)
            } catch {
                reader.failed = true
                return connection.close(.protocolError, reason: "Malformed long-poll segments: \(error).")
            }
            for text in texts {
                do throws(ClientMessage.Malformed) {
                    connection.receive(try ClientMessage.reading(text))
                } catch {
                    reader.failed = true
                    return connection.close(.protocolError, reason: "Malformed message: \(error.reason).")
                }
            }
        }
    }

    /// Ends the session (once): a held poll is told, its listens end and its onDisconnect writes
    /// run.
    func close() {
        let (first, connection) = self.link.withLock { link -> (Bool, WireConnection?) in
            guard !link.closed else { return (false, nil) }
            link.closed = true
            defer { link.connection = nil }
            return (true, link.connection)
        }
        guard first else { return }
        self.outbox.close()
        self.state.longPolls.remove(self)
        connection?.end()
    }

    /// Whether the session ended.
    var isClosed: Bool { self.link.withLock { $0.closed } }

    // MARK: WireTransport

    func open() {
        self.state.metrics.countLongPollOpened()
    }

    /// What was queued goes to the client's polls first (the client is told to close after it).
    func close(_ code: WebSocketErrorCode, reason: String) async {
        self.state.configuration.logger.debug("long-poll session \(self.id) closed: \(reason)")
        await self.outbox.finish()
        self.close()
    }

    func abort() {
        self.close()
    }

    /// A random token of letters and digits.
    private static func token(length: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }
}
