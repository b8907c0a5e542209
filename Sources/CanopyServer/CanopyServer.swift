import Canopy
import CanopyCluster
import CanopyCore
public import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import UnixSignals

/// An HTTP server speaking the Firebase Realtime Database REST protocol, with streaming
/// (server-sent events), over a ``NamespaceStore`` of Canopy databases.
///
/// ```swift
/// let server = CanopyServer(configuration: ServerConfiguration(), store: NamespaceStore(directory: "data"))
/// try await server.run()   // until SIGINT or SIGTERM, or shutdown()
/// ```
public final class CanopyServer: Sendable {
    public let configuration: ServerConfiguration
    public let store: NamespaceStore
    let state: ServerState
    private let port = Mutex<(port: Int?, waiters: [CheckedContinuation<Int?, Never>], ended: Bool)>((nil, [], false))
    private let group = Mutex<ServiceGroup?>(nil)

    public init(configuration: ServerConfiguration, store: NamespaceStore) {
        self.configuration = configuration
        self.store = store
        self.state = ServerState(configuration: configuration, store: store)
        // Rules that don't compile (a configuration ``ServerConfiguration/validate()`` refuses) lock
        // every namespace rather than opening it.
        let initial = configuration.rules.map { (try? NamespaceRules(source: $0)) ?? .locked }
        store.setRules(RulesSetup(guarded: self.state.isGuarded, initial: initial))
    }

    /// The Hummingbird application (for in-process tests: `app.test(.router)`).
    public func makeApplication() -> some ApplicationProtocol {
        let bodyTimeout = self.configuration.requestBodyTimeout.map { TimeAmount($0) }
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: bodyTimeout.map { [RequestDeadline(timeout: $0)] } ?? [],
            idleTimeout: self.configuration.idleTimeout.map { TimeAmount($0) }
        )
        let state = self.state
        return Application(
            responder: CanopyResponder(state: self.state),
            server: HTTPServerBuilder { [state] responder in WireChildChannel(responder: responder, http1: http1, state: state) },
            configuration: ApplicationConfiguration(
                address: .hostname(self.configuration.host, port: self.configuration.port), serverName: "Canopy"),
            onServerRunning: { [self] channel in self.started(port: channel.localAddress?.port) },
            logger: self.configuration.logger
        )
    }

    /// Serves until SIGINT, SIGTERM or ``shutdown()``; then ends the streams, finishes the
    /// requests in flight and closes the databases (which flushes them).
    public func run(handleSignals: Bool = true) async throws {
        try self.configuration.validate()
        let group = ServiceGroup(
            configuration: .init(
                services: [self.makeApplication(), StreamService(state: self.state, interval: self.configuration.keepAliveInterval)],
                gracefulShutdownSignals: handleSignals ? [.sigterm, .sigint] : [],
                logger: self.configuration.logger
            )
        )
        self.group.withLock { $0 = group }
        defer { self.ended() }
        // A cluster node renews its lease while it serves; losing it stops serving what it led.
        let keepAlive = self.store.cluster.map { cluster in
            Task { [store = self.store] in
                await cluster.keepAlive(
                    leases: { store.servedLeases() },
                    superseded: { moved in
                        for lease in moved { store.evict(lease.namespace, reason: "Namespace \(lease.namespace) moved to another node.") }
                    },
                    beat: { node in await store.afterHeartbeat(node) },
                    lost: { reason in store.evictAll(reason: reason) })
            }
        }
        defer { keepAlive?.cancel() }
        // Followers wake when an append to a log they follow commits.
        let appends = self.store.cluster.flatMap { cluster in
            cluster.maxReplicated == nil
                ? nil
                : Task { [store = self.store] in
                    await cluster.store.followAppends(retry: cluster.store.configuration.lease / 3) { store.appendCommitted($0) }
                }
        }
        defer { appends?.cancel() }
        do {
            try await group.run()
        } catch {
            await self.closeStore()
            throw error
        }
        await self.closeStore()
    }

    /// Closes the databases (which flushes them) once the SDK connections, which no task of the
    /// server waits for, are closed and their onDisconnect writes have run.
    private func closeStore() async {
        self.state.wireSessions.closeAll()
        await self.state.wireSessions.waitUntilEnded()
        await self.store.close()
    }

    /// Starts a graceful shutdown of ``run(handleSignals:)``.
    public func shutdown() async {
        let group = self.group.withLock { $0 }
        await group?.triggerGracefulShutdown()
    }

    /// The port the server listens on, once it does (`nil` if it stopped before listening).
    public func listeningPort() async -> Int? {
        await withCheckedContinuation { continuation in
            let now: Int?? = self.port.withLock { state in
                if let port = state.port { return .some(port) }
                if state.ended { return .some(nil) }
                state.waiters.append(continuation)
                return .none
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    /// The number of open streams.
    public var streamCount: Int { self.state.streamCount }

    /// The number of open SDK WebSocket connections.
    public var webSocketCount: Int { max(0, self.state.wireSessions.count - self.state.longPolls.count) }

    /// The number of open SDK connections over long polling.
    public var longPollCount: Int { self.state.longPolls.count }

    private func started(port: Int?) {
        let waiters = self.port.withLock { state in
            state.port = port
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: port) }
    }

    private func ended() {
        let (waiters, port) = self.port.withLock { state in
            state.ended = true
            defer { state.waiters = [] }
            return (state.waiters, state.port)
        }
        for waiter in waiters { waiter.resume(returning: port) }
    }
}
