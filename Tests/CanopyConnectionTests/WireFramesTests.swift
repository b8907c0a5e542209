import CanopyConnection
import CanopyCore
import CanopyTestSupport
import CanopyWire
import Hummingbird
import HummingbirdWebSocket
import NIOCore
import ServiceLifecycle
import Testing

/// What goes over the socket, frame by frame, seen by a bare WebSocket server that only says hello
/// and records the text frames it receives.
@Suite("WebSocket frames")
struct WireFramesTests {
    @Test("the upgrade carries ls and the headers; a long request is a count and pieces; silence brings the keep-alive")
    func frames() async throws {
        let (received, sink) = AsyncStream.makeStream(of: String.self)
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let hello = String(decoding: ServerMessage.hello(timestamp: 1, host: "h", session: "s2"), as: UTF8.self)
        let app = Application(
            router: Router(),
            server: .http1WebSocketUpgrade { request, _, _ in
                sink.yield("upgrade \(request.path ?? "") \(request.headerFields[.init("X-Test")!] ?? "")")
                return .upgrade([:]) { inbound, outbound, _ in
                    try await outbound.write(.text(hello))
                    for try await frame in inbound { sink.yield(String(buffer: frame.data)) }
                }
            },
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portSink.yield(channel.localAddress?.port ?? 0) })
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask(executorPreference: testServerExecutor) { try await app.runService(gracefulShutdownSignals: []) }
            var portIterator = ports.makeAsyncIterator()
            let port = try #require(await portIterator.next())
            // A watchdog: nothing below waits forever.
            group.addTask {
                try? await Task.sleep(for: .seconds(30))
                sink.finish()
            }
            let log = EventLog()
            var events = log.stream.makeAsyncIterator()
            let connection = WireConnection.open(
                url: try DatabaseURL("http://127.0.0.1:\(port)?ns=test"), lastSession: "s1", headers: [("X-Test", "yes")],
                keepAliveInterval: .milliseconds(50), logger: testLogger, handler: log.handler)
            guard case .ready(let serverHello)? = await events.next() else { throw Failure("no hello") }
            #expect(serverHello.session == "s2")

            var frames = received.makeAsyncIterator()
            #expect(await frames.next() == "upgrade /.ws?v=5&ns=test&ls=s1 yes")
            let request = ClientRequest.put(
                id: 1, path: DatabasePath(["big"]), data: Node.leaf(.string(String(repeating: "x", count: 40_000))).wireJSON)
            #expect(connection.send(request))
            var pieces: [String] = []
            while pieces.count < 4 {
                let frame = try #require(await frames.next())
                // On a slow machine a keep-alive may go out before the request; never inside it.
                if pieces.isEmpty && frame == "0" { continue }
                pieces.append(frame)
            }
            #expect(pieces[0] == "3" && pieces[1].utf16.count == 16_384 && pieces.dropFirst().joined() == request.text)
            // Nothing else is sent: after 50 ms of silence comes the keep-alive.
            #expect(await frames.next() == "0")

            connection.close()
            guard case .closed? = await events.next() else { throw Failure("no close") }
            group.cancelAll()
        }
    }
}
