import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Defers the wakes of streams that were woken less than `interval` ago and wakes them all on
/// its next tick: under load, each stream then writes one batch per interval, whatever the write
/// rate, which bounds the per-event cost of the HTTP layer; an idle stream is still woken at once.
final class WakeScheduler: Sendable {
    let intervalNanos: UInt64
    private let interval: Duration
    private let pending = Mutex<(streams: [EventStream], ticking: Bool)>(([], false))

    init(interval: Duration) {
        self.interval = interval
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
        guard start else { return }
        Task {
            while true {
                try? await Task.sleep(for: self.interval)
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
            }
        }
    }
}
