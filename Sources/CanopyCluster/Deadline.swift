package import CanopyCore
import Synchronization

/// Runs `body` until `deadline`: a statement to a PostgreSQL that went silent (a cut network,
/// a session the server ended) must not hold its caller longer than the lease it protects.
///
/// `body` runs in a task of its own; past the deadline the caller gets `.clusterUnavailable`
/// naming `what`, and `onTimeout` runs (to close the connection, which ends `body`).
package func withDeadline<T: Sendable>(
    _ deadline: ContinuousClock.Instant, doing what: String, onTimeout: @escaping @Sendable () async -> Void = {},
    _ body: @escaping @Sendable () async throws(DatabaseError) -> T
) async throws(DatabaseError) -> T {
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, DatabaseError>, Never>) in
        let once = Once(continuation)
        let work = Task {
            let outcome: Result<T, DatabaseError>
            do throws(DatabaseError) { outcome = .success(try await body()) } catch { outcome = .failure(error) }
            once.take()?.resume(returning: outcome)
        }
        Task {
            try? await Task.sleep(until: deadline, clock: .continuous)
            guard let waiting = once.take() else { return }
            waiting.resume(returning: .failure(DatabaseError(.clusterUnavailable, "PostgreSQL did not answer in time while \(what).")))
            work.cancel()
            await onTimeout()
        }
    }
    return try result.get()
}

/// A continuation that the first of two tasks takes.
private final class Once<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>

    init(_ continuation: CheckedContinuation<Value, Never>) { self.continuation = Mutex(continuation) }

    func take() -> CheckedContinuation<Value, Never>? { self.continuation.withLock { $0.take() } }
}
