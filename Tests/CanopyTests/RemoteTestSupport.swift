import CanopyRemote
import CanopyServer
import CanopyTestSupport
import Foundation

/// A `canopy serve` in this process, on a free loopback port, over in-memory namespaces.
struct TestServer: Sendable {
    let port: Int

    /// Runs `body` with a server configured by `configure`, then stops the server (also when
    /// `body` throws). The server's tasks run on `testServerExecutor`, `body` on the clients' threads.
    static func serving<T: Sendable>(
        _ configure: (inout ServerConfiguration) -> Void = { _ in }, _ body: @Sendable (TestServer) async throws -> T
    ) async throws -> T {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configure(&configuration)
        let server = CanopyServer(configuration: configuration, store: NamespaceStore(directory: nil))
        return try await asTestClient {
            try await server.serving(on: testServerExecutor) { port in try await body(TestServer(port: port)) }
        }
    }

    func url(namespace: String = "test") -> String { "http://127.0.0.1:\(self.port)?ns=\(namespace)" }
}

extension Database {
    /// A remote database on `server`, driven by the test (loop mode `.manual`), reconnecting fast.
    static func remoteForTest(_ url: String, configure: (inout Database.Configuration) -> Void = { _ in }) throws -> Database {
        var configuration = Database.Configuration()
        configuration.loopMode = .manual
        configuration.minimumRetryDelay = .milliseconds(20)
        configuration.maximumRetryDelay = .milliseconds(200)
        configure(&configuration)
        return try Database(url: url, configuration: configuration)
    }

    /// Runs the loop until the remote database is connected with nothing in flight (every write
    /// acknowledged, every listen answered).
    /// The bound is twice the usual: the server in this process runs on Swift concurrency's few
    /// threads, which other tests running at the same time may hold for a while.
    func settle(seconds: Double = 2 * defaultWaitSeconds) throws {
        try waitUntil("the remote database to settle", seconds: seconds) {
            self.drain()
            return self.isRemoteSettled
        }
    }

    /// Runs the loop until `condition` holds.
    func drain(until what: String, seconds: Double = 2 * defaultWaitSeconds, _ condition: () -> Bool) throws {
        try waitUntil(what, seconds: seconds) {
            self.drain()
            return condition()
        }
    }
}

/// Runs `body` on a thread of its own: a test that drives a database's loop blocks while it waits
/// for the network, which must not hold one of the few threads Swift concurrency (and the server
/// in this process) runs on.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}
