import Glibc

/// A value behind a pthread mutex, with a condition variable to wait for it to change: the
/// journal writer's hand-off state. Waits time out against `CLOCK_MONOTONIC`, immune to changes
/// of the wall clock. (`Synchronization.Mutex` cannot wait; the event loop keeps its own lock.)
// @unchecked Sendable: `state` is only read or written while `mutex` is held.
final class WaitableState<State>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var state: State

    init(_ state: State) {
        self.state = state
        precondition(pthread_mutex_init(self.mutex, nil) == 0, "pthread_mutex_init failed")
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        precondition(pthread_cond_init(self.changed, &attributes) == 0, "pthread_cond_init failed")
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(self.changed)
        pthread_mutex_destroy(self.mutex)
        self.changed.deallocate()
        self.mutex.deallocate()
    }

    /// Runs `body` with the lock held, once `mustWait` is `false` or the monotonic clock reached
    /// `deadline` (nanoseconds; `nil`: no limit). `mustWait` runs with the lock held before each
    /// wait and after each wake-up.
    func withLock<Result>(
        waitingWhile mustWait: (inout State) -> Bool = { _ in false },
        deadline: UInt64? = nil,
        _ body: (inout State) throws -> Result
    ) rethrows -> Result {
        pthread_mutex_lock(self.mutex)
        defer { pthread_mutex_unlock(self.mutex) }
        if let deadline {
            var limit = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
            while mustWait(&self.state) {
                if pthread_cond_timedwait(self.changed, self.mutex, &limit) == ETIMEDOUT { break }
            }
        } else {
            while mustWait(&self.state) { pthread_cond_wait(self.changed, self.mutex) }
        }
        return try body(&self.state)
    }

    /// Wakes every waiter; they re-check their condition.
    func broadcast() {
        pthread_cond_broadcast(self.changed)
    }
}
