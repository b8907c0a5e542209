import Canopy
import CanopyCluster
import CanopyCore
import CanopyWire
import Foundation
import Logging
import NIOCore
import NIOWebSocket
import Synchronization

/// Serves one SDK connection, whatever carries it (a WebSocket, or long polling: its
/// ``WireTransport``): the hello, then each message in order, then, when the connection ends,
/// its onDisconnect writes.
///
/// Messages arrive from ``WireChannelHandler`` on the connection's event loop (or from a
/// long-poll request, see ``LongPollSession``). A request that
/// needs no waiting (a listen, read or write once the namespace is open: nearly all of them) is
/// handled there and then; one that must wait (the first request, which opens the namespace, an
/// `auth`, an onDisconnect write) starts a task that handles it and every request queued behind
/// it, in order, and ends when the queue is empty. So requests take effect strictly in the order
/// they arrive, and an idle connection keeps no task.
final class WireConnection: Sendable {
    let state: ServerState
    let session: WireSession
    let host: String
    let previousSession: String?
    /// The credential of the upgrade request's `Authorization: Bearer` header, if any.
    let bearer: String?
    /// What carries the connection.
    let transport: any WireTransport

    /// Work that runs in a task, in order.
    private enum Job: Sendable {
        /// In a cluster: the redirect to the namespace's leader, or the hello and ``start``.
        case route
        /// The upgrade's credential and a reconnecting client's previous connection (`ls`).
        case start
        case request(id: Int64, action: ClientAction)
        /// The server ends the connection (a protocol error): what is queued goes out first.
        case close(WebSocketErrorCode, reason: String)
        /// The socket closed: the connection's listens go, its onDisconnect writes run.
        case end
    }

    private struct Queue {
        /// Empty nearly always (an empty array allocates nothing: every connection has one), and
        /// short when not.
        var jobs: [Job] = []
        /// A task is running the jobs; new ones queue behind it.
        var running = false
    }

    private let queue = Mutex(Queue())
    /// ``start()`` counted the connection among the server's (the end uncounts it).
    private let started = Atomic<Bool>(false)

    init(
        state: ServerState, session: WireSession, host: String, previousSession: String?, bearer: String?, transport: any WireTransport
    ) {
        self.state = state
        self.session = session
        self.host = host
        self.previousSession = previousSession
        self.bearer = bearer
        self.transport = transport
    }

    /// Once upgraded (on the event loop), or once a long-poll session started: the hello; the
    /// upgrade's credential is verified and a returning client's previous connection (`ls`) ended
    /// before any request is handled. `false` when the server is shutting down (the connection
    /// is closed).
    @discardableResult
    func start() -> Bool {
        guard self.state.wireSessions.add(self.session) else {
            self.transport.abort()
            return false
        }
        self.started.store(true, ordering: .relaxed)
        self.transport.open()
        self.greet()
        return true
    }

    /// The hello (or, in a cluster, the route to it), then the start's work.
    private func greet() {
        if self.state.store.cluster != nil { return self.submit(.route) }
        self.session.outbox.send(ServerMessage.hello(timestamp: Self.now(), host: self.host, session: self.session.sessionID))
        if self.bearer != nil || self.previousSession != nil {
            self.submit(.start)
        } else {
            self.session.watchExpiry()
        }
    }

    /// A whole message from the client: a ping is answered at once, a request handled in order;
    /// the long-poll upgrade's control messages (`a`, `n`) need no answer.
    func receive(_ message: ClientMessage) {
        switch message {
        case .control(let type):
            if type == "p" { self.session.outbox.send(ServerMessage.pong) }
        case .request(let id, let action):
            self.request(id: id, action: action)
        }
    }

    /// On the event loop: a request, handled in the order of arrival.
    func request(id: Int64, action: ClientAction) {
        self.state.metrics.countRequest(action)
        self.submit(.request(id: id, action: action))
    }

    /// Ends the connection with a close frame, after the answers to the requests before it.
    func close(_ code: WebSocketErrorCode, reason: String) {
        self.submit(.close(code, reason: reason))
    }

    /// On the event loop, when the socket closed.
    func end() {
        if self.started.load(ordering: .relaxed) { self.submit(.end) }
    }

    /// Handles `job` now if nothing is queued and it needs no waiting; otherwise queues it, and
    /// starts the task that runs the queue if none is running.
    private func submit(_ job: Job) {
        let idle = self.queue.withLock { queue in
            if queue.running { queue.jobs.append(job) }
            return !queue.running
        }
        guard idle else { return }
        if case .request(let id, let action) = job, WireRequests(session: self.session, state: self.state).handleNow(id: id, action: action)
        {
            return
        }
        self.queue.withLock { $0.running = true }
        Task(executorPreference: self.session.taskExecutor) { await self.run(from: job) }
    }

    /// Runs `job`, then every job queued behind it; marks the queue idle when it is empty.
    private func run(from first: Job) async {
        var next: Job? = first
        while let job = next {
            await self.run(job)
            next = self.queue.withLock { queue in
                if !queue.jobs.isEmpty { return queue.jobs.removeFirst() }
                queue.running = false
                return nil
            }
        }
    }

    private func run(_ job: Job) async {
        let logger = self.state.configuration.logger
        switch job {
        case .route:
            if let leader = await self.state.store.redirection(for: self.session.namespaceName) {
                // Instead of the hello: the SDKs reconnect to the leader at once.
                self.session.outbox.send(ServerMessage.redirect(to: ClusterMembership.hostAndPort(of: leader)))
                return await self.run(.close(.normalClosure, reason: "redirected"))
            }
            self.session.outbox.send(ServerMessage.hello(timestamp: Self.now(), host: self.host, session: self.session.sessionID))
            await self.run(.start)
        case .start:
            // The Admin SDKs send their credential on the upgrade; one that proves nothing leaves
            // the connection anonymous until its `auth`.
            if let bearer = self.bearer { self.session.identity = (try? await self.state.identify(bearer).get()) ?? .anonymous }
            if let previous = self.previousSession.flatMap({ self.state.wireSessions.session($0) }),
                previous.namespaceName == self.session.namespaceName
            {
                // A reconnecting client: its previous connection is gone, whatever the socket says.
                await Self.runCloseWrites(of: previous, logger: logger)
            }
            self.session.watchExpiry()
        case .request(let id, let action):
            await WireRequests(session: self.session, state: self.state).handle(id: id, action: action)
        case .close(let code, let reason):
            // What was queued goes first, then the transport closes.
            await self.transport.close(code, reason: reason)
        case .end:
            let session = self.session
            let sessions = self.state.wireSessions
            session.stopWatchingExpiry()
            await session.outbox.finish()
            sessions.remove(session)
            // The server closes its databases only after this (see ``WireSessions/ended()``).
            defer { sessions.ended() }
            guard let namespace = session.namespace else { return }
            let hub = namespace.hub
            _ = try? await namespace.database.loop { access in session.unlistenAll(hub: hub, access: access) }
            await Self.runCloseWrites(of: session, logger: logger)
        }
    }

    /// Applies a connection's onDisconnect writes, in order, as ordinary writes judged by the rules
    /// in force now (as the identity that asked for them), each awaited until durable.
    static func runCloseWrites(of session: WireSession, logger: Logger) async {
        // Close-time writes exist only once a request opened the namespace.
        guard let namespace = session.namespace else { return }
        for (write, identity, registration) in session.takeCloseWrites() {
            // In a cluster, its registration goes in the transaction that appends it.
            let outcome = await namespace.submit(ClientWrite(write: write, identity: identity, registration: registration))
            switch outcome {
            case .written: continue
            case .denied:
                logger.warning("onDisconnect write at \(write.path.string) failed: Permission denied")
                // Refused by the rules now: it never runs, so PostgreSQL forgets it. (A database
                // that closed leaves it to the namespace's next leader.)
                if let registration, let store = namespace.clusterStore {
                    try? await store.cancelOnDisconnect([registration], in: namespace.name)
                }
            case .failed(let error):
                logger.warning("onDisconnect write at \(write.path.string) failed: \(error.message)")
            case .stale, .changed:
                logger.warning("onDisconnect write at \(write.path.string) failed: its data changed")
            }
        }
    }

    /// The largest WebSocket message a client may send: the SDKs split at 16,384 UTF-16 code units,
    /// which take at most three UTF-8 bytes each.
    static let maxFrameBytes = 3 * WireFrameSplitter.frameLimit + 1024

    /// How long a close frame the server sent waits for the client's before the socket closes.
    static let closeTimeout = TimeAmount.seconds(5)

    static func now() -> Int64 {
        Int64(Date().timeIntervalSince1970 * 1000)
    }
}
