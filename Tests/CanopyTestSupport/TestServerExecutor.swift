import CanopyLoop

/// The executor the tests' in-process servers run on, with threads of its own: Swift concurrency's
/// default executor has as many threads as the machine has cores (two in CI), and a synchronous
/// test holds one for as long as it runs, which must not stall a server other tests are talking to.
public let testServerExecutor: any TaskExecutor = ThreadPoolTaskExecutor(threads: 4, name: "test-server")

/// The executor the clients of those servers run on (see ``asTestClient(_:)``).
private let testClientExecutor: any TaskExecutor = ThreadPoolTaskExecutor(threads: 2, name: "test-client")

/// Runs `body`, a test talking to an in-process server, and its child tasks on threads of their
/// own (a `Task {}` it creates does not inherit them): for the same reason as the server, a client
/// waiting for a thread of the default executor between two steps (a minute, in a full run on two
/// cores) meets the server's timeouts and its own.
public func asTestClient<T: Sendable>(_ body: () async throws -> T) async throws -> T {
    try await withTaskExecutorPreference(testClientExecutor) { try await body() }
}
