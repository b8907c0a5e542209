/// Counters of an ``EventLoop``'s inbox, read together under the inbox lock.
///
/// Any thread may read ``EventLoop/statistics``; the values are a consistent snapshot.
package struct EventLoopStatistics: Sendable, Equatable {
    /// Jobs that ``EventLoop/execute(_:)`` accepted.
    package var jobsAccepted = 0
    /// Jobs that ``EventLoop/execute(_:)`` refused because shutdown had begun.
    package var jobsRejected = 0
    /// Jobs that have finished running on the loop thread.
    package var jobsRun = 0
    /// Jobs accepted but not yet run (the inbox plus the loop's current batch).
    package var queuedJobs = 0
    /// The largest value ``queuedJobs`` ever reached. Producers on other threads keep it at or
    /// below ``EventLoop/inboxCapacity``; only jobs queued by the loop thread itself can exceed it.
    package var highWaterMark = 0
    /// How many times a producer blocked because the inbox was full.
    package var producerWaits = 0
    /// Producers blocked on a full inbox right now.
    package var waitingProducers = 0
    /// `uv_async_send` calls made (one per wake-up, however many jobs it carried).
    package var wakeupsSent = 0
    /// Async callbacks the loop thread handled (libuv may coalesce several sends into one).
    package var wakeupsHandled = 0
}
