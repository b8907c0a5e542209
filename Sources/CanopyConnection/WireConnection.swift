import CanopyLoop
package import CanopyWire
import HTTPTypes
package import Logging
import NIOCore
import NIOPosix
import NIOWebSocket
import Synchronization
import WSClient

/// One WebSocket to a `canopy serve` (or any server speaking the SDKs' protocol, v5): it frames
/// and reassembles messages, decodes what the server sends, and keeps the socket alive. It keeps
/// no database state and answers nothing itself.
///
/// The handler is called serially, in the order the frames arrived: exactly one ``Event/ready(hello:)``
/// after the server's hello, then ``Event/message(_:)`` for every later message, then exactly one
/// ``Event/closed(reason:)`` (also when the connection fails, when no hello arrives within the
/// connect timeout, on a malformed message, and after ``close()``). A reset (`r`) sent instead of
/// a hello arrives as a message, followed by `.closed`; its socket is then closed with a close
/// frame.
///
/// Requests passed to ``send(_:)`` before the hello are queued and sent, in order, right after it
/// (so a client may queue its stats, auth and listens as soon as it opens the connection).
/// After 45 s without a frame in either direction (the JS and Android rule) it sends the `0`
/// keep-alive. Timers run on NIO's shared event loop group; nothing polls.
///
/// ``close()`` delivers `.closed` at once, then sends a close frame. A connect that has not reached
/// the hello when it is closed or times out is cancelled and abandoned: its socket ends with NIO's
/// TCP connect timeout or when the peer closes it. The handler runs on a task of its own. The
/// connection's tasks prefer ``ThreadPoolTaskExecutor/connections`` to Swift concurrency's default
/// executor, so a process whose default threads are busy with blocking work still keeps in sync.
package final class WireConnection: Sendable {
    /// What the connection reports.
    package enum Event: Sendable {
        /// The server's hello arrived: the connection is usable.
        case ready(hello: ServerHello)
        /// A message from the server after the hello.
        case message(ServerEvent)
        /// The connection is closed (or never opened); `reason` says why. The last event.
        case closed(reason: String)
    }

    /// The largest message (and frame) accepted from the server, in UTF-8 bytes.
    package static let maxMessageBytes = 256 << 20

    private enum Outgoing: Sendable {
        case frame(String)
        case close
    }

    private struct State: Sendable {
        var isClosed = false
        var isReady = false
        var lastActivity = NIODeadline.now()
        var timer: Scheduled<Void>? = nil
        var task: Task<Void, Never>? = nil
    }

    private let state = Mutex(State())
    private let outgoing: AsyncStream<Outgoing>.Continuation
    private let outgoingFrames: AsyncStream<Outgoing>
    private let events: AsyncStream<Event>.Continuation
    private let keepAliveInterval: TimeAmount
    private let logger: Logger

    private init(keepAliveInterval: TimeAmount, logger: Logger, handler: @escaping @Sendable (Event) -> Void) {
        (self.outgoingFrames, self.outgoing) = AsyncStream.makeStream(of: Outgoing.self)
        let (events, continuation) = AsyncStream.makeStream(of: Event.self)
        self.events = continuation
        self.keepAliveInterval = keepAliveInterval
        self.logger = logger
        Task(executorPreference: ThreadPoolTaskExecutor.connections) {
            for await event in events { handler(event) }
        }
    }

    /// Opens a connection to `url`'s database and returns at once; the outcome arrives at `handler`.
    ///
    /// - Parameters:
    ///   - lastSession: The session id of the previous connection's hello (sent as `ls`).
    ///   - headers: Extra headers on the upgrade request (e.g. `User-Agent`, `Authorization`);
    ///     names that are not valid HTTP field names are skipped.
    ///   - connectTimeout: How long to wait for the hello after starting to connect.
    ///   - keepAliveInterval: The silence after which the `0` keep-alive is sent.
    package static func open(
        url: DatabaseURL, lastSession: String?, headers: [(String, String)] = [], connectTimeout: Duration = .seconds(15),
        keepAliveInterval: Duration = .seconds(45), logger: Logger, handler: @escaping @Sendable (Event) -> Void
    ) -> WireConnection {
        let connection = WireConnection(keepAliveInterval: .init(keepAliveInterval), logger: logger, handler: handler)
        var configuration = WebSocketClientConfiguration(maxFrameSize: Self.maxMessageBytes, closeTimeout: .seconds(5))
        for (name, value) in headers {
            if let name = HTTPField.Name(name) { configuration.additionalHeaders.append(HTTPField(name: name, value: value)) }
        }
        let webSocketURL = url.webSocketURL(lastSession: lastSession)
        // The connect timer is stored before the connection can reach the hello (which cancels it).
        let timer = MultiThreadedEventLoopGroup.singleton.next().scheduleTask(in: .init(connectTimeout)) {
            connection.finish("no hello from \(url.authority) within \(connectTimeout)")
        }
        connection.state.withLock { $0.timer = timer }
        let task = Task(executorPreference: ThreadPoolTaskExecutor.connections) {
            do {
                let closeFrame = try await WebSocketClient.connect(url: webSocketURL, configuration: configuration, logger: logger) {
                    inbound, outbound, _ in
                    try await connection.run(inbound: inbound, outbound: outbound)
                }
                connection.finish("closed by the server" + (closeFrame.map { " (\($0.closeCode))" } ?? ""))
            } catch {
                connection.finish("connection to \(url.authority) failed: \(error)")
            }
        }
        // Kept for cancelling the connect; a connection closed meanwhile cancels it now.
        let cancelNow = connection.state.withLock { state in
            if !state.isClosed { state.task = task }
            return state.isClosed && !state.isReady
        }
        if cancelNow { task.cancel() }
        return connection
    }

    /// Sends `request` (split into frames when longer than 16,384 characters), after every request
    /// sent before it. Before the hello it is queued.
    ///
    /// - Returns: `false` once the connection is closed (the request is not sent).
    @discardableResult
    package func send(_ request: ClientRequest) -> Bool {
        self.state.withLock { state in
            guard !state.isClosed else { return false }
            for frame in WireFrameSplitter.frames(request.text) { self.outgoing.yield(.frame(frame)) }
            state.lastActivity = .now()
            return true
        }
    }

    /// Closes the connection; `.closed` is delivered (once, however often this is called).
    package func close() {
        self.finish("closed by the client")
    }

    // MARK: - Running

    /// Reads frames until the socket ends; starts the writer once the hello arrived.
    private func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            var assembler = WireFrameAssembler(maxMessageBytes: Self.maxMessageBytes)
            var isReady = false
            for try await message in inbound.messages(maxSize: Self.maxMessageBytes) {
                guard case .text(let frame) = message else { continue }  // the SDKs ignore binary frames
                self.state.withLock { $0.lastActivity = .now() }
                let event: ServerEvent
                do {
                    guard let text = try assembler.receive(frame) else { continue }
                    event = try ServerEvent(parsing: text)
                } catch {
                    self.finish("unreadable message from the server: \(error)")
                    break
                }
                if isReady {
                    self.emit(.message(event))
                } else if case .hello(let hello) = event {
                    isReady = true
                    group.addTask { try await self.write(outbound) }
                    self.ready(hello)
                } else {
                    // A reset (or anything else) instead of a hello: report it, then close. The
                    // socket is open: it is closed properly when this returns (not abandoned as a
                    // cancelled connect would be, which the server would wait for).
                    self.emit(.message(event))
                    self.finish("no hello: the server sent \(describe(event))", cancellingConnect: false)
                    break
                }
            }
            group.cancelAll()
        }
    }

    /// Writes queued frames in order until the connection closes.
    private func write(_ outbound: WebSocketOutboundWriter) async throws {
        for await item in self.outgoingFrames {
            switch item {
            case .frame(let text): try await outbound.writeTextMessage(text)
            case .close:
                try await outbound.close(.normalClosure, reason: nil)
                return
            }
        }
    }

    private func ready(_ hello: ServerHello) {
        self.state.withLock { state in
            guard !state.isClosed else { return }
            state.isReady = true
            state.timer?.cancel()
            state.lastActivity = .now()
            self.scheduleKeepAlive(&state)
            // Under the lock, so that `.ready` comes before anything `finish` delivers.
            self.events.yield(.ready(hello: hello))
        }
    }

    private func emit(_ event: Event) {
        self.state.withLock { state in
            guard !state.isClosed else { return }
            self.events.yield(event)
        }
    }

    /// Closes everything once: delivers `.closed(reason)`, stops the timers, asks the writer to
    /// send a close frame (or, `cancellingConnect`, cancels the connect when there is no writer yet).
    private func finish(_ reason: String, cancellingConnect: Bool = true) {
        let task: Task<Void, Never>? = self.state.withLock { state in
            if !state.isClosed {
                state.isClosed = true
                self.events.yield(.closed(reason: reason))
                self.events.finish()
                self.outgoing.yield(.close)
                self.outgoing.finish()
                self.logger.debug("wire connection closed", metadata: ["reason": "\(reason)"])
            }
            state.timer?.cancel()
            state.timer = nil
            defer { state.task = nil }
            return state.isReady || !cancellingConnect ? nil : state.task
        }
        task?.cancel()
    }

    /// Schedules the keep-alive check for the end of the current quiet period.
    private func scheduleKeepAlive(_ state: inout State) {
        let deadline = state.lastActivity + self.keepAliveInterval
        state.timer = MultiThreadedEventLoopGroup.singleton.next().scheduleTask(deadline: deadline) { [self] in
            self.state.withLock { state in
                guard !state.isClosed else { return }
                if NIODeadline.now() >= state.lastActivity + self.keepAliveInterval {
                    self.outgoing.yield(.frame(ClientRequest.keepAlive.text))
                    state.lastActivity = .now()
                }
                self.scheduleKeepAlive(&state)
            }
        }
    }
}

/// A short description of an event for a close reason.
private func describe(_ event: ServerEvent) -> String {
    switch event {
    case .reset(let host): "a reset to \(host)"
    case .shutdown(let reason): "a shutdown (\(reason))"
    default: "another message first"
    }
}
