import CanopyTestSupport
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import Synchronization

/// A WebSocket server that answers every connection with the SDKs' reset control message
/// (`{"t":"c","d":{"t":"r","d":HOST}}`) instead of a hello, then waits for the client to close, as
/// a server moving its clients to another host does; or, `helloFirst`, says hello, waits for the client's first
/// request and then resets the open connection. It counts the connections.
final class ResettingServer: Sendable {
    /// The host the next reset names.
    let target: Mutex<String>
    private let count = Atomic<Int>(0)
    private let listeningPort = Atomic<Int>(0)
    private let helloFirst: Bool

    init(target: String, helloFirst: Bool = false) {
        self.target = Mutex(target)
        self.helloFirst = helloFirst
    }

    /// The connections made to it so far.
    var connections: Int { self.count.load(ordering: .sequentiallyConsistent) }

    /// Runs `body` while the server listens on a free loopback port.
    func serving<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: Router(),
            // A client that closes mid-connect leaves its socket to the server: wait little for it
            // (its request, its close frame), so shutting down never waits for it.
            server: .http1WebSocketUpgrade(
                configuration: .init(http1: .init(idleTimeout: .milliseconds(500)), ws: .init(closeTimeout: .milliseconds(200)))
            ) { _, _, _ in
                .upgrade([:]) { inbound, outbound, _ in
                    self.count.add(1, ordering: .sequentiallyConsistent)
                    var frames = inbound.makeAsyncIterator()
                    if self.helloFirst {
                        try await outbound.write(.text(#"{"t":"c","d":{"t":"h","d":{"ts":1,"v":"5","h":"redirector","s":"s1"}}}"#))
                        _ = try await frames.next()
                    }
                    let host = self.target.withLock { $0 }
                    try await outbound.write(.text(#"{"t":"c","d":{"t":"r","d":"\#(host)"}}"#))
                    // Then wait for the client to close. (Returning at once, which starts the
                    // server's close right after the write, now and then leaves the client with
                    // neither the reset nor the close until its connect timeout.)
                    while try await frames.next() != nil {}
                }
            },
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portSink.yield(channel.localAddress?.port ?? 0) },
            logger: Logger(label: "canopy.tests.resetting-server"))
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask(executorPreference: testServerExecutor) {
                try await app.runService(gracefulShutdownSignals: [])
                return nil
            }
            var iterator = ports.makeAsyncIterator()
            self.listeningPort.store(await iterator.next() ?? 0, ordering: .sequentiallyConsistent)
            let result = try await body()
            group.cancelAll()
            return result
        }
    }

    /// The port it listens on, once ``serving(_:)`` runs.
    var port: Int { self.listeningPort.load(ordering: .sequentiallyConsistent) }

    /// Its address, as a reset names it.
    var host: String { "127.0.0.1:\(self.port)" }
}
