import CanopyCore
import Synchronization

/// Joins a write's result (read right after it is applied) and its durability completion
/// (which may come first, when the write is refused, or later).
final class WriteRendezvous<T: Sendable>: Sendable {
    private struct State {
        var value: T?
        var error: DatabaseError?
        var completed = false
        var continuation: CheckedContinuation<Result<T, RESTError>, Never>?
    }

    private let state: Mutex<State>

    init(_ continuation: CheckedContinuation<Result<T, RESTError>, Never>) {
        self.state = Mutex(State(continuation: continuation))
    }

    func setValue(_ value: T) {
        self.resolve { $0.value = value }
    }

    func complete(_ error: DatabaseError?) {
        self.resolve { state in
            state.completed = true
            state.error = error
        }
    }

    private func resolve(_ update: (inout State) -> Void) {
        let action: (CheckedContinuation<Result<T, RESTError>, Never>, Result<T, RESTError>)? = self.state.withLock { state in
            update(&state)
            guard let continuation = state.continuation, state.completed else { return nil }
            if let error = state.error {
                state.continuation = nil
                return (continuation, .failure(WriteBodies.error(error)))
            }
            guard let value = state.value else { return nil }
            state.continuation = nil
            return (continuation, .success(value))
        }
        if let (continuation, result) = action { continuation.resume(returning: result) }
    }
}
