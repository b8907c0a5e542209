import CanopyConnection
import CanopyServer
import CanopyTestSupport
import Logging

/// The events a connection reports, read in order; `next()` returns `nil` once the stream ends or
/// the test's deadline passes (a watchdog ends the stream, so nothing waits forever).
final class EventLog: Sendable {
    let stream: AsyncStream<WireConnection.Event>
    private let continuation: AsyncStream<WireConnection.Event>.Continuation

    init(deadline: Duration = .seconds(90)) {
        let (stream, continuation) = AsyncStream.makeStream(of: WireConnection.Event.self)
        self.stream = stream
        self.continuation = continuation
        // Not cancelled with the log: the iterator may outlive it.
        Task {
            try? await Task.sleep(for: deadline)
            continuation.finish()
        }
    }

    var handler: @Sendable (WireConnection.Event) -> Void {
        { [continuation] event in
            continuation.yield(event)
            if case .closed = event { continuation.finish() }
        }
    }
}

let testLogger = Logger(label: "canopy.connection.tests")

/// Runs `body` with a server on a free loopback port; shuts it down after.
func withServer<T: Sendable>(
    _ configure: (inout ServerConfiguration) -> Void = { _ in }, _ body: @Sendable (Int) async throws -> T
) async throws -> T {
    var configuration = ServerConfiguration()
    configuration.port = 0
    configure(&configuration)
    let server = CanopyServer(configuration: configuration, store: NamespaceStore(directory: nil))
    return try await asTestClient { try await server.serving(on: testServerExecutor, body) }
}
