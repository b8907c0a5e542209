import CLibUV
import CanopyCore

extension EventLoop {
    /// Queues `job` to run on the loop thread; the only entry point from other threads.
    ///
    /// Jobs posted by one thread run in the order that thread posted them. Any thread may call it:
    /// - from another thread, it blocks while ``inboxCapacity`` jobs are queued, until the loop
    ///   has run some of them or shutdown begins (backpressure);
    /// - from the loop thread it never blocks (the bound does not apply, so it cannot deadlock).
    ///
    /// A loop that nobody drives yet still applies the bound to other threads, and to the test
    /// thread before its first ``drain(maxTurns:)``.
    ///
    /// - Returns: `true` if the job was queued; it will run, shutdown included. `false` if
    ///   shutdown had begun; the job is dropped without running.
    @discardableResult
    package func execute(_ job: @escaping Job) -> Bool {
        self.execute(job, bounded: true)
    }

    /// Like ``execute(_:)`` but never blocks: the inbox bound does not apply. Only for control
    /// messages whose number is bounded by their sender (such as one outstanding "writes are
    /// durable" notice from the journal thread), which must not wait for a loop that may be
    /// waiting for them.
    @discardableResult
    package func executeUnbounded(_ job: @escaping Job) -> Bool {
        self.execute(job, bounded: false)
    }

    private func execute(_ job: @escaping Job, bounded: Bool) -> Bool {
        let onLoop = self.inLoop
        let fromLoop = onLoop || !bounded
        let capacity = self.inboxCapacity
        var waiting = false
        // Finished jobs taken from the inbox below, released when this returns, on this thread
        // and outside the lock (see `LoopControl.finishedJobs`).
        var finished: [Job] = []
        var finishedValues: [any Sendable] = []
        defer {
            finished.removeAll()
            finishedValues.removeAll()
        }
        return self.control.withLock(waitingWhile: { state in
            let full = !fromLoop && state.accepting && state.pending >= capacity
            if full != waiting {
                waiting = full
                state.statistics.waitingProducers += full ? 1 : -1
                if full { state.statistics.producerWaits += 1 }
            }
            return full
        }) { state in
            guard state.accepting else {
                state.statistics.jobsRejected += 1
                return false
            }
            state.jobs.append(job)
            if !onLoop && !(state.finishedJobs.isEmpty && state.finishedValues.isEmpty) {
                swap(&finished, &state.finishedJobs)
                swap(&finishedValues, &state.finishedValues)
            }
            state.pending += 1
            state.statistics.jobsAccepted += 1
            state.statistics.highWaterMark = max(state.statistics.highWaterMark, state.pending)
            self.requestWakeup(&state)
            return true
        }
    }

    /// Makes sure an async callback will run, sending only if no send is outstanding.
    ///
    /// Call with the inbox lock held, and only while the async handle is open: while `accepting`
    /// is true, or on the loop thread before ``beginClosing()``. Sending under the lock is what
    /// keeps a producer from sending to a handle that shutdown has closed.
    func requestWakeup(_ state: inout LoopControl) {
        guard !state.wakePending else { return }
        state.wakePending = true
        state.statistics.wakeupsSent += 1
        uv_async_send(self.wakeup)
    }

    /// The async callback, on the loop thread: one budgeted batch, then closing if requested.
    func handleWakeup() {
        let accepting = self.runJobs(limit: self.jobsPerTurn, isWakeup: true)
        if !accepting {
            self.beginClosing()
        }
    }

    /// Runs up to `limit` queued jobs on the loop thread, in order.
    ///
    /// 1. Under the lock: clear `wakePending` (on a wake-up) and, if the batch is used up, take
    ///    the whole inbox as the next batch (libuv coalesces sends, so one callback takes all).
    /// 2. Without the lock: run at most `limit` jobs, re-reading the batch size every time.
    /// 3. Under the lock: account for them and re-arm if anything is left, so neither a leftover
    ///    batch nor a job posted while `wakePending` was still set is stranded.
    ///
    /// - Returns: whether the loop still accepts jobs (`false` means shutdown was requested).
    @discardableResult
    func runJobs(limit: Int, isWakeup: Bool) -> Bool {
        self.control.withLock { state in
            if isWakeup {
                state.wakePending = false
                state.statistics.wakeupsHandled += 1
            }
            if self.backlogHead == self.backlog.count {
                self.backlog.removeAll(keepingCapacity: true)
                self.backlogHead = 0
                swap(&state.jobs, &self.backlog)
            }
        }
        var ran = 0
        while ran < limit, self.backlogHead < self.backlog.count {
            let job = self.backlog[self.backlogHead]
            self.backlogHead += 1
            ran += 1
            job()
        }
        self.jobsRunOnLoop += ran
        let batchDone = self.backlogHead == self.backlog.count
        let closing = self.closingStarted
        // Finished jobs taken back from the inbox when it runs empty, released below.
        var finished: [Job] = []
        var finishedValues: [any Sendable] = []
        let accepting = self.control.withLock { state in
            state.pending -= ran
            state.statistics.jobsRun += ran
            let workLeft = self.backlogHead < self.backlog.count || !state.jobs.isEmpty
            if workLeft, !closing {
                self.requestWakeup(&state)
                // The loop comes back for the queued jobs. When it is behind (a turn's worth of
                // jobs queued, or half the inbox: producers outpace it), leave this batch's
                // finished jobs to the next producer to release (see `LoopControl.finishedJobs`);
                // when producers are the slower side, the loop keeps that work.
                let behind = state.pending >= max(1, min(self.jobsPerTurn, self.inboxCapacity / 2))
                if batchDone && ran > 0 && behind && state.accepting && state.finishedJobs.isEmpty && state.finishedValues.isEmpty {
                    swap(&state.finishedJobs, &self.backlog)
                    swap(&state.finishedValues, &self.retired)
                    self.backlogHead = 0
                }
            } else if !(state.finishedJobs.isEmpty && state.finishedValues.isEmpty) {
                swap(&finished, &state.finishedJobs)
                swap(&finishedValues, &state.finishedValues)
            }
            return state.accepting
        }
        if self.backlogHead == self.backlog.count {
            // Drop finished jobs now: one that captures the loop would otherwise keep it alive.
            self.backlog.removeAll(keepingCapacity: true)
            self.backlogHead = 0
            self.retired.removeAll(keepingCapacity: true)
        }
        finished.removeAll()
        finishedValues.removeAll()
        if ran > 0 {
            self.control.broadcast()  // room in the inbox: release blocked producers
        }
        return accepting
    }

    /// Keeps `value` until the jobs of the current batch have all run, then releases it with
    /// them: by the next producer on another thread while more jobs are queued, else here. For
    /// what a job replaced that another thread allocated (a written value the tree let go of), so
    /// that the thread which allocated it frees it. Loop thread only.
    package func releaseWithFinishedJobs(_ value: any Sendable) {
        self.retired.append(value)
    }

    /// Jobs accepted but not yet run. Any thread.
    var hasQueuedJobs: Bool {
        self.control.withLock { $0.pending > 0 }
    }
}
