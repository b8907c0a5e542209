import CLibUV
import CanopyCore

extension EventLoop {
    /// Starts a dedicated thread that runs the loop until ``shutdown()``.
    ///
    /// Call it at most once, from any thread, on a loop nobody drives yet. The new thread is the
    /// loop thread: it runs every job, timer and signal callback. ``shutdown()`` from another
    /// thread joins it. Does nothing if the loop has already been shut down.
    ///
    /// - Parameter name: The thread's name as `top` or `gdb` show it (at most 15 bytes are kept).
    /// - Throws: ``UVError`` if the thread cannot be created; the loop is then undriven again.
    package func startThread(name: String = "canopy-loop") throws {
        guard self.claimDriver(.thread, "startThread()") else { return }
        // The thread holds the loop until it has finished it.
        let (status, thread) = startNamedThread(name) { self.threadMain() }
        guard status == 0 else {
            let closeHere = self.control.withLock { state -> Bool in
                state.driver = state.accepting ? .none : .inline
                return !state.accepting
            }
            if closeHere {  // a shutdown() arrived meanwhile and is waiting for a finish
                self.closeInline()
            }
            throw UVError(code: status)
        }
        self.control.withLock { $0.thread = thread }
        self.control.broadcast()
    }

    /// Makes `driver` the loop's driver if it has none and accepts work; `false` (nothing to
    /// drive) once it has been shut down. Driving a loop that is already driven is a
    /// programming error, reported naming `function`.
    private func claimDriver(_ driver: LoopDriver, _ function: String) -> Bool {
        self.control.withLock { state -> Bool in
            if state.driver == .none, state.accepting {
                state.driver = driver
                return true
            }
            precondition(!state.accepting, "\(function): the loop is already driven (\(state.driver))")
            return false
        }
    }

    func threadMain() {
        self.claimLoopThread()
        self.driveUntilClosed()
    }

    /// Runs the loop on the calling thread until ``shutdown()`` (from any thread, a job or a
    /// timer) or one of `signals` arrives; then closes it and returns.
    ///
    /// The caller becomes the loop thread for the duration. Meant for command-line programs:
    /// `try loop.run(stopOn: [SIGINT, SIGTERM])` lets Ctrl-C end the program cleanly. Returns at
    /// once if the loop was already shut down.
    ///
    /// - Parameter signals: Signals that shut the loop down, through unreferenced `uv_signal_t`
    ///   handles (see ``stopOnSignal(_:)``).
    /// - Throws: ``UVError`` if a signal handler cannot be installed; the loop is closed first.
    package func run(stopOn signals: [Int32] = []) throws {
        guard self.claimDriver(.run, "run()") else { return }
        self.claimLoopThread()
        do {
            for signal in signals {
                try self.stopOnSignal(signal)
            }
        } catch {
            self.closeInline()
            throw error
        }
        self.driveUntilClosed()
    }

    /// Test mode: runs, on the calling thread, every queued job and every due timer, signal and
    /// thread-pool completion, until a turn finds nothing to do; then returns.
    ///
    /// The first call makes the calling thread the loop thread (for good: ``inLoop`` stays true
    /// there between calls, so tests may call loop-thread-only APIs directly). Each turn is one
    /// `uv_run(UV_RUN_NOWAIT)`, or `UV_RUN_ONCE` while thread-pool work is in flight, so jobs run
    /// through the real async callback in batches of ``jobsPerTurn``. Timers fire only once due.
    /// If shutdown was requested, the call finishes it (``closeReport`` is then set).
    ///
    /// - Parameter maxTurns: Upper bound on loop iterations, for work that keeps re-queueing itself.
    /// - Returns: How many jobs ran.
    @discardableResult
    package func drain(maxTurns: Int = .max) -> Int {
        let proceed = self.control.withLock { state -> Bool in
            if state.report != nil { return false }
            switch state.driver {
            case .none:
                state.driver = .manual
                self.claimLoopThread()
                return true
            case .manual:
                return true
            case .inline:
                return false  // another thread is closing the loop right now
            case .thread, .run:
                preconditionFailure("drain(): the loop is driven by \(state.driver)")
            }
        }
        guard proceed else { return 0 }
        self.preconditionInLoop("drain() must be called by the thread that drained this loop first")
        precondition(self.driveDepth == 0, "drain() must not be called from a loop callback")
        let jobsAtStart = self.jobsRunOnLoop
        var turns = 0
        while turns < maxTurns {
            let jobsBefore = self.jobsRunOnLoop
            let callbacksBefore = self.callbacksRun
            self.driveDepth += 1
            uv_run(self.loop, self.requestsInFlight > 0 ? UV_RUN_ONCE : UV_RUN_NOWAIT)
            self.driveDepth -= 1
            turns += 1
            if self.closingStarted {
                self.finishClosing()
                break
            }
            let idle = self.jobsRunOnLoop == jobsBefore && self.callbacksRun == callbacksBefore
            if idle, self.requestsInFlight == 0, !self.hasQueuedJobs {
                break
            }
        }
        return self.jobsRunOnLoop - jobsAtStart
    }

    /// `UV_RUN_DEFAULT` until the loop has no referenced handle left, which happens only once
    /// shutdown has closed the async handle; then finishes closing. On the loop thread.
    func driveUntilClosed() {
        self.driveDepth += 1
        while uv_run(self.loop, UV_RUN_DEFAULT) != 0 {}
        self.driveDepth -= 1
        self.finishClosing()
    }
}
