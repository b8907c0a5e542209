import CLibUV
import CanopyCore
import Glibc
import Synchronization

/// One libuv loop (`uv_loop_t`) and the rules for reaching it from other threads.
///
/// The loop is driven in exactly one of three ways, which decides its *loop thread*:
/// - ``startThread(name:)``: a dedicated thread runs it until ``shutdown()``;
/// - ``run(stopOn:)``: the caller's thread runs it until ``shutdown()`` or a signal (CLI programs);
/// - ``drain(maxTurns:)``: test mode; the calling thread becomes the loop thread and each call
///   runs whatever is queued or due, then returns.
///
/// ``execute(_:)`` is the only entry from other threads. Everything else (``schedule(after:repeating:_:)``,
/// ``stopOnSignal(_:)``, ``runInThreadPool(_:then:)``, ``LoopBound``) is loop-thread-only and
/// checked with ``preconditionInLoop(_:file:line:)``.
///
/// ```swift
/// let loop = try EventLoop()
/// try loop.startThread(name: "canopy-db")
/// loop.execute { print("on the loop thread") }
/// let report = loop.shutdown()   // runs queued jobs, closes every handle, joins the thread
/// assert(report?.isClean == true)
/// ```
// @unchecked Sendable: cross-thread state lives in `control` (a pthread lock) or `owner` (an
// atomic); the libuv pointers and the remaining vars are touched only on the loop thread.
package final class EventLoop: @unchecked Sendable {
    /// Work posted to the loop. It runs on the loop thread.
    package typealias Job = @Sendable () -> Void

    /// How many jobs may wait in the inbox before producers on other threads block.
    package let inboxCapacity: Int
    /// How many jobs one loop iteration runs before timers, signals and I/O get a turn.
    package let jobsPerTurn: Int

    let loop: UnsafeMutablePointer<uv_loop_t>
    let wakeup: UnsafeMutablePointer<uv_async_t>
    let control: ConditionLock<LoopControl>
    /// `uv_thread_self()` of the loop thread, or 0 while no thread owns the loop.
    let owner = Atomic<UInt>(0)

    // Loop-thread-only state.
    /// The batch taken from the inbox; `backlogHead` is the next job to run.
    var backlog: [Job] = []
    var backlogHead = 0
    /// Values to release with the current batch once it has run (``releaseWithFinishedJobs(_:)``).
    var retired: [any Sendable] = []
    /// Nesting depth of `uv_run` calls (and inline closing) on the loop thread.
    var driveDepth = 0
    var closingStarted = false
    var jobsRunOnLoop = 0
    var jobsRunDuringShutdown = 0
    /// Timer, signal and thread-pool callbacks run so far; `drain` uses it to detect idleness.
    var callbacksRun = 0
    /// Thread-pool requests whose completion has not run yet.
    var requestsInFlight = 0

    /// Creates a loop with its wake-up handle. Nothing runs until the loop is driven.
    ///
    /// Any thread may create it.
    ///
    /// - Parameters:
    ///   - inboxCapacity: Queued jobs at which producers on other threads block (at least 1).
    ///   - jobsPerTurn: Jobs run per loop iteration before other callbacks get a turn (at least 1).
    /// - Throws: ``UVError`` when `uv_loop_init` or `uv_async_init` fails (e.g. out of descriptors).
    package init(inboxCapacity: Int = 65_536, jobsPerTurn: Int = 4_096) throws {
        precondition(inboxCapacity >= 1, "inboxCapacity must be at least 1")
        precondition(jobsPerTurn >= 1, "jobsPerTurn must be at least 1")
        let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        let status = uv_loop_init(loop)
        guard status == 0 else {
            loop.deallocate()
            throw UVError(code: status)
        }
        let wakeup = UnsafeMutablePointer<uv_async_t>.allocate(capacity: 1)
        let asyncStatus = uv_async_init(loop, wakeup) { handle in
            guard let handle else { return }
            EventLoop.from(handle.pointee.loop).handleWakeup()
        }
        guard asyncStatus == 0 else {
            wakeup.deallocate()
            uv_loop_close(loop)
            loop.deallocate()
            throw UVError(code: asyncStatus)
        }
        wakeup.pointee.data = nil
        self.loop = loop
        self.wakeup = wakeup
        self.inboxCapacity = inboxCapacity
        self.jobsPerTurn = jobsPerTurn
        self.control = ConditionLock(LoopControl())
        loop.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        // A dedicated thread or run() always finishes the loop before letting go of it, so an
        // unfinished loop here was never driven or was drained by hand: close it now, dropping
        // jobs nobody will run.
        let (finished, driver, thread, joined) = self.control.withLock { state in
            (state.report != nil, state.driver, state.thread, state.threadJoined)
        }
        if !finished {
            self.control.withLock { state in
                state.accepting = false
                state.jobs.removeAll()
                state.finishedJobs.removeAll()
                state.finishedValues.removeAll()
                state.pending = 0
            }
            self.backlog.removeAll()
            self.backlogHead = 0
            self.retired.removeAll()
            self.claimLoopThread()
            self.finishClosing()
        }
        if driver == .thread, !joined, var thread {
            if thread == uv_thread_self() {
                pthread_detach(thread)  // the loop thread dropped the last reference
            } else {
                uv_thread_join(&thread)
            }
        }
        if self.control.withLock({ $0.report?.loopCloseResult }) == 0 {
            self.loop.deallocate()
        }  // else: libuv may still point into the loop; leaking it is the safe choice.
    }

    /// The Swift object stored (unretained) in `loop->data`, for C callbacks.
    static func from(_ loop: UnsafeMutablePointer<uv_loop_t>?) -> EventLoop {
        guard let data = loop?.pointee.data else {
            preconditionFailure("libuv callback on a loop without its EventLoop")
        }
        return Unmanaged<EventLoop>.fromOpaque(data).takeUnretainedValue()
    }

    /// Whether the calling thread is this loop's thread. Any thread may ask.
    package var inLoop: Bool {
        let owner = self.owner.load(ordering: .acquiring)
        return owner != 0 && owner == uv_thread_self()
    }

    /// Makes the calling thread the loop thread.
    func claimLoopThread() {
        self.owner.store(uv_thread_self(), ordering: .releasing)
    }

    /// Forgets the loop thread once the loop has closed: thread ids are reused after a thread exits.
    func releaseLoopThread() {
        self.owner.store(0, ordering: .releasing)
    }

    /// Stops the program unless called on the loop thread. Any thread may call it.
    package func preconditionInLoop(
        _ message: @autoclosure () -> String = "must be called on the event loop thread",
        file: StaticString = #fileID,
        line: UInt = #line
    ) {
        precondition(self.inLoop, message(), file: file, line: line)
    }

    /// A consistent snapshot of the inbox counters. Any thread may read it.
    package var statistics: EventLoopStatistics {
        self.control.withLock { state in
            var statistics = state.statistics
            statistics.queuedJobs = state.pending
            return statistics
        }
    }

    /// The outcome of shutdown, once the loop has closed; `nil` before. Any thread may read it.
    package var closeReport: LoopCloseReport? {
        self.control.withLock { $0.report }
    }

    /// Whether ``execute(_:)`` still accepts jobs (`false` once shutdown began). Any thread.
    package var isAcceptingJobs: Bool {
        self.control.withLock { $0.accepting }
    }

    /// Whether the thread from ``startThread(name:)`` has been joined. Any thread may read it.
    package var isThreadJoined: Bool {
        self.control.withLock { $0.threadJoined }
    }

    /// Handles the loop knows about, counted with `uv_walk`: the wake-up handle plus every open
    /// or closing timer and signal handle. Loop thread only.
    package var openHandleCount: Int {
        self.preconditionInLoop()
        return self.countHandles()
    }

    func countHandles() -> Int {
        var count = 0
        withUnsafeMutablePointer(to: &count) { counter in
            uv_walk(
                self.loop,
                { _, counter in
                    counter?.assumingMemoryBound(to: Int.self).pointee += 1
                }, counter)
        }
        return count
    }
}
