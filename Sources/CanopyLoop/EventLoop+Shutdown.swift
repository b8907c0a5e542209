import CLibUV
import CanopyCore

extension EventLoop {
    /// Stops accepting jobs, runs the jobs already accepted, closes every handle (wake-up, timers,
    /// signals), waits for in-flight thread-pool work, and closes the libuv loop.
    ///
    /// Any thread may call it, any number of times; it never deadlocks:
    /// - from another thread, with a dedicated thread or ``run(stopOn:)`` driving, it blocks until
    ///   the loop has closed and the dedicated thread has been joined;
    /// - on a loop that nobody drives, or from the ``drain(maxTurns:)`` thread outside a callback,
    ///   it does all the work on the calling thread before returning;
    /// - from a job or callback on the loop thread it only *requests* shutdown and returns `nil`:
    ///   the loop closes as soon as that callback returns; a later `shutdown()` from another
    ///   thread waits for it and joins the thread;
    /// - from another thread while a drain-mode loop is idle it only requests shutdown; the
    ///   owner's next ``drain(maxTurns:)`` finishes it.
    ///
    /// Blocked producers are released at once; their ``execute(_:)`` returns `false`.
    /// Do not call it from thread-pool work: the loop waits for that work to finish.
    ///
    /// - Returns: The ``LoopCloseReport`` if the loop has closed by the time the call returns.
    @discardableResult
    package func shutdown() -> LoopCloseReport? {
        enum Plan { case closeHere, requestOnly, waitForClose }
        let onLoop = self.inLoop
        let plan = self.control.withLock { state -> Plan in
            if state.accepting {
                state.accepting = false
                self.requestWakeup(&state)  // the async handle is still open: closing needs this lock
            }
            if state.report != nil { return .waitForClose }
            switch state.driver {
            case .none:
                state.driver = .inline
                return .closeHere
            case .manual:
                return onLoop && self.driveDepth == 0 ? .closeHere : .requestOnly
            case .thread, .run, .inline:
                return onLoop ? .requestOnly : .waitForClose
            }
        }
        self.control.broadcast()
        switch plan {
        case .closeHere:
            self.closeInline()
            return self.closeReport
        case .requestOnly:
            return nil
        case .waitForClose:
            return self.waitForCloseAndJoin()
        }
    }

    /// Called by a `uv_signal_t` callback on the loop thread: shut down right away, without
    /// queueing behind pending jobs.
    func shutdownFromSignal() {
        self.control.withLock { $0.accepting = false }
        self.control.broadcast()
        self.beginClosing()
    }

    /// On the thread that will own the loop: close everything now, outside any loop callback.
    func closeInline() {
        self.claimLoopThread()
        self.driveDepth += 1  // jobs run below must not re-enter drain() or closeInline()
        self.beginClosing()
        self.driveDepth -= 1
        self.finishClosing()
    }

    /// Step one of closing, on the loop thread, once `accepting` is false: run every accepted job
    /// (no budget: they were promised), then `uv_close` every handle that is not closing yet.
    func beginClosing() {
        guard !self.closingStarted else { return }
        self.closingStarted = true  // from here on, schedule() hands out cancelled timers
        let jobsBefore = self.jobsRunOnLoop
        while self.hasQueuedJobs {
            self.runJobs(limit: .max, isWakeup: false)
        }
        self.jobsRunDuringShutdown = self.jobsRunOnLoop - jobsBefore
        uv_walk(
            self.loop,
            { handle, _ in
                guard let handle, uv_is_closing(handle) == 0 else { return }
                uv_close(handle, releaseClosedHandle)
            }, nil)
    }

    /// Step two, on the loop thread: run the loop until every close callback and in-flight
    /// request has completed, then `uv_loop_close`, record the report and wake waiters.
    func finishClosing() {
        if !self.closingStarted {
            self.beginClosing()
        }
        self.driveDepth += 1
        while uv_run(self.loop, UV_RUN_DEFAULT) != 0 {}
        self.driveDepth -= 1
        let handlesLeft = self.countHandles()
        let alive = uv_loop_alive(self.loop) != 0
        let status = uv_loop_close(self.loop)
        assert(status == 0, "uv_loop_close failed: \(UVError(code: status))")
        let report = LoopCloseReport(
            loopCloseResult: status,
            handlesLeft: handlesLeft,
            loopWasAlive: alive,
            jobsRunDuringShutdown: self.jobsRunDuringShutdown
        )
        self.releaseLoopThread()
        self.control.withLock { $0.report = report }
        self.control.broadcast()
    }

    /// From a thread other than the loop thread: wait for the close, then join the dedicated
    /// thread (exactly one caller joins; the others wait until it has).
    private func waitForCloseAndJoin() -> LoopCloseReport? {
        let (report, threadToJoin) = self.control.withLock(waitingWhile: { state in
            state.report == nil || (state.driver == .thread && state.thread == nil)
        }) { state -> (LoopCloseReport?, uv_thread_t?) in
            guard state.driver == .thread, !state.joinClaimed else { return (state.report, nil) }
            state.joinClaimed = true
            return (state.report, state.thread)
        }
        if var thread = threadToJoin {
            let status = uv_thread_join(&thread)
            assert(status == 0, "uv_thread_join failed: \(UVError(code: status))")
            self.control.withLock { $0.threadJoined = true }
            self.control.broadcast()
        } else {
            self.control.withLock(waitingWhile: { $0.driver == .thread && !$0.threadJoined }) { _ in }
        }
        return report
    }
}
