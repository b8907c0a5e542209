import Glibc

/// A pthread mutex and condition variable guarding one value: the event loop's inbox, the thread
/// pool's queue and the journal writer's hand-off state.
///
/// Producers must be able to block while the inbox is full, and the journal writer must wait for
/// work, which `Synchronization.Mutex` cannot do; pthread locks are also understood by
/// ThreadSanitizer, which reports false races inside the futex-based `Mutex` on Linux. Waits time
/// out against `CLOCK_MONOTONIC`, immune to changes of the wall clock. Any thread may use it.
// @unchecked Sendable: `state` is only read or written while `mutex` is held.
package final class ConditionLock<State>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var state: State

    package init(_ state: State) {
        self.state = state
        precondition(pthread_mutex_init(self.mutex, nil) == 0, "pthread_mutex_init failed")
        // Timed waits measure against the monotonic clock, immune to wall-clock changes.
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        precondition(pthread_cond_init(self.condition, &attributes) == 0, "pthread_cond_init failed")
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(self.condition)
        pthread_mutex_destroy(self.mutex)
        self.condition.deallocate()
        self.mutex.deallocate()
    }

    /// Runs `body` with the lock held.
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(self.mutex)
        defer { pthread_mutex_unlock(self.mutex) }
        return try body(&self.state)
    }

    /// Runs `body` with the lock held once `mustWait` returns `false`.
    ///
    /// `mustWait` is called with the lock held before each wait and after each wake-up, so it may
    /// record statistics; while it returns `true` the caller sleeps on the condition variable with
    /// the lock released. A fresh access to the state is made on every call, never across a wait.
    package func withLock<Result>(
        waitingWhile mustWait: (inout State) -> Bool,
        _ body: (inout State) throws -> Result
    ) rethrows -> Result {
        pthread_mutex_lock(self.mutex)
        defer { pthread_mutex_unlock(self.mutex) }
        while mustWait(&self.state) {
            pthread_cond_wait(self.condition, self.mutex)
        }
        return try body(&self.state)
    }

    /// Wakes every thread waiting in ``withLock(waitingWhile:_:)``; they re-check their condition.
    ///
    /// Cheap when nobody waits (glibc returns without a system call).
    package func broadcast() {
        pthread_cond_broadcast(self.condition)
    }

    /// Like ``withLock(waitingWhile:_:)``, but stops waiting once the monotonic clock reaches
    /// `deadline` (nanoseconds, as `clock_gettime(CLOCK_MONOTONIC)`); `body` then runs anyway.
    package func withLock<Result>(
        waitingWhile mustWait: (inout State) -> Bool,
        deadline: UInt64,
        _ body: (inout State) throws -> Result
    ) rethrows -> Result {
        pthread_mutex_lock(self.mutex)
        defer { pthread_mutex_unlock(self.mutex) }
        var limit = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while mustWait(&self.state) {
            if pthread_cond_timedwait(self.condition, self.mutex, &limit) == ETIMEDOUT { break }
        }
        return try body(&self.state)
    }
}
