import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Defers the wakes of streams that were woken less than `interval` ago and wakes them all on
/// its next tick: under load, each stream then writes one batch per interval, whatever the write
/// rate, which bounds the per-event cost of the HTTP layer; an idle stream is still woken at once.
final class WakeScheduler: Sendable {
    let intervalNanos: UInt64
    private let pending = Mutex<(streams: [EventStream], ticking: Bool)>(([], false))

    init(interval: Duration) {
        let (seconds, attoseconds) = interval.components
        self.intervalNanos = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    func schedule(_ stream: EventStream) {
        let start: Bool = self.pending.withLock { pending in
            pending.streams.append(stream)
            if pending.ticking { return false }
            pending.ticking = true
            return true
        }
        if start { self.tick() }
    }

    /// Wakes the deferred streams after an interval, and again after each interval until one
    /// passes with none deferred. On NIO's event loops: the wakes must not wait for Swift
    /// concurrency's threads.
    private func tick() {
        MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: .nanoseconds(Int64(self.intervalNanos))) {
            let due: [EventStream] = self.pending.withLock { pending in
                if pending.streams.isEmpty {
                    pending.ticking = false
                    return []
                }
                defer { pending.streams = [] }
                return pending.streams
            }
            if due.isEmpty { return }
            for stream in due { stream.wakeDeferred() }
            self.tick()
        }
    }
}
