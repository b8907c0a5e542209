extension EventLoop {
    /// Runs `callback` on the loop thread once `delay` has passed, then every `interval` if given.
    ///
    /// Loop thread only (checked). The delay is measured from this call, in whole milliseconds
    /// rounded up (libuv's resolution); a repeating interval is at least 1 ms. A zero delay fires
    /// on the next loop iteration, after the current batch of jobs. Once shutdown has begun the
    /// returned timer is already inactive and never fires.
    ///
    /// ```swift
    /// let flush = loop.schedule(after: .milliseconds(1), repeating: .milliseconds(1)) { [weak journal] in
    ///     journal?.flush()
    /// }
    /// // later, on any thread:
    /// flush.cancel()
    /// ```
    ///
    /// - Returns: A handle whose ``LoopTimer/cancel()`` stops the timer.
    @discardableResult
    package func schedule(
        after delay: Duration,
        repeating interval: Duration? = nil,
        _ callback: @escaping () -> Void
    ) -> LoopTimer {
        self.preconditionInLoop("schedule(after:) is loop-thread-only; use scheduleFromAnyThread")
        let timer = LoopTimer(loop: self, delay: delay, interval: interval, callback: callback)
        timer.arm(on: self)
        return timer
    }

    /// Like ``schedule(after:repeating:_:)``, callable from any thread.
    ///
    /// From another thread the timer is started by a job posted with ``execute(_:)`` (so this
    /// may block like any producer), and the delay counts from when that job runs. The timer
    /// never fires if shutdown has begun. The callback runs on the loop thread.
    @discardableResult
    package func scheduleFromAnyThread(
        after delay: Duration,
        repeating interval: Duration? = nil,
        _ callback: @escaping @Sendable () -> Void
    ) -> LoopTimer {
        let timer = LoopTimer(loop: self, delay: delay, interval: interval, callback: callback)
        if self.inLoop {
            timer.arm(on: self)
        } else if !self.execute({ timer.arm(on: self) }) {
            timer.discard()  // nobody else holds it yet, so this is safe off the loop thread
        }
        return timer
    }
}
