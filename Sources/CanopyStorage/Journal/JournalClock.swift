#if canImport(Glibc)
    import Glibc
#endif

/// The clock the journal's periodic sync measures its interval with: the monotonic clock, or in
/// tests one they move by hand, so a test drives the sync instead of waiting for it.
package protocol JournalClock: Sendable {
    /// Nanoseconds on a monotonic scale.
    func now() -> UInt64

    /// The `CLOCK_MONOTONIC` time at which this clock reads `time`, for the writer thread's timed
    /// wait; a far-off time for a clock that does not move by itself.
    func monotonicDeadline(reaching time: UInt64) -> UInt64

    /// Registers `wake`, to be called whenever the clock jumps (never, for the system clock), so
    /// a waiting writer re-checks whether a sync is due.
    func onAdvance(_ wake: @escaping @Sendable () -> Void)
}

/// `CLOCK_MONOTONIC`.
package struct SystemJournalClock: JournalClock {
    package init() {}

    package func now() -> UInt64 { monotonicNow() }

    package func monotonicDeadline(reaching time: UInt64) -> UInt64 { time }

    package func onAdvance(_ wake: @escaping @Sendable () -> Void) {}
}

/// Nanoseconds on the monotonic clock.
package func monotonicNow() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}
