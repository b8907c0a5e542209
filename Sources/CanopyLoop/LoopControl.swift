import CLibUV

/// Who drives an ``EventLoop``; decided once, under the inbox lock.
enum LoopDriver: Equatable {
    /// Nobody yet.
    case none
    /// A dedicated thread from ``EventLoop/startThread(name:)``.
    case thread
    /// A caller blocked in ``EventLoop/run(stopOn:)``.
    case run
    /// The thread that calls ``EventLoop/drain(maxTurns:)`` (test mode).
    case manual
    /// ``EventLoop/shutdown()`` found no driver and closed the loop on the calling thread.
    case inline
}

/// The cross-thread state of an ``EventLoop``, guarded by its ``ConditionLock``.
///
/// The wake-up protocol: `wakePending` is set, and `uv_async_send` called, only by the producer
/// that flips it from `false` to `true`, while holding the lock (so a send never reaches a handle
/// that shutdown has closed: `accepting` turns false under the same lock). libuv may merge several
/// sends into one callback, so the callback takes every queued job; it clears `wakePending` first
/// thing and re-arms whenever the inbox or its batch still holds work, or a wake-up is lost.
struct LoopControl {
    /// Jobs posted since the loop last took the inbox, in submission order.
    var jobs: [EventLoop.Job] = []
    /// Jobs the loop has run, left for the next producer on another thread to release: what a
    /// job captured was mostly allocated by that thread, and freeing it there keeps the loop's time
    /// for running jobs (and the memory in that thread's allocator arena). Handed over only while
    /// the loop is behind (a turn's worth of jobs queued, or half the inbox: producers outpace it),
    /// and parked only while more jobs are queued: when the inbox runs empty the loop releases them
    /// itself, so a finished job never keeps anything alive (the loop included) while nothing is
    /// queued.
    var finishedJobs: [EventLoop.Job] = []
    /// Values given to ``EventLoop/releaseWithFinishedJobs(_:)`` while those jobs ran, released with them.
    var finishedValues: [any Sendable] = []
    /// Accepted jobs not yet run: `jobs` plus what is left of the loop's current batch.
    var pending = 0
    /// A `uv_async_send` was made and its callback has not started yet.
    var wakePending = false
    /// `false` once shutdown has begun; from then on the async handle may be closed.
    var accepting = true
    var driver = LoopDriver.none
    /// The dedicated thread, once created.
    var thread: uv_thread_t?
    var joinClaimed = false
    var threadJoined = false
    /// Set once `uv_loop_close` has run.
    var report: LoopCloseReport?
    var statistics = EventLoopStatistics()
}
