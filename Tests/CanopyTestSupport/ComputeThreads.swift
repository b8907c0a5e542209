import CanopyLoop

/// The threads long synchronous tests compute on (see ``onComputeThreads(_:)``).
private let computeExecutor: any TaskExecutor = ThreadPoolTaskExecutor(threads: 2, name: "test-compute")

/// Runs `body`, long synchronous work (a randomized test against its oracle), on threads of its
/// own instead of Swift concurrency's default executor, keeping the test's task (its `#expect`s
/// are the test's).
///
/// Swift Testing runs a synchronous test on the default executor, which has as many threads as
/// the machine has cores (two in CI): a few tests computing for tens of seconds there leave none
/// for the asynchronous tests, whose clients and servers then wait a minute or more between two
/// steps and meet their timeouts.
public func onComputeThreads<T: Sendable>(_ body: () throws -> T) async throws -> T {
    try await withTaskExecutorPreference(computeExecutor) { try body() }
}
