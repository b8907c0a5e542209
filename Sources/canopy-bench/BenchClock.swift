import Canopy
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Nanoseconds on the monotonic clock (a vDSO call, cheap enough to time single API calls).
@inline(__always)
func monotonicNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// Seconds elapsed since `start` (from ``monotonicNanos()``).
func secondsSince(_ start: UInt64) -> Double { Double(monotonicNanos() &- start) / 1e9 }

/// Seconds between two ``monotonicNanos()`` readings.
func secondsBetween(_ start: UInt64, _ end: UInt64) -> Double { Double(end &- start) / 1e9 }

/// Latency summary of a set of per-call timings in nanoseconds (sorted in place).
struct LatencySummary {
    var p50: Double
    var p99: Double
    var p999: Double
    var max: Double

    init(sortingNanos samples: inout [UInt64]) {
        samples.sort()
        func at(_ q: Double) -> Double {
            guard !samples.isEmpty else { return 0 }
            let index = Swift.min(samples.count - 1, Int((Double(samples.count) * q).rounded(.up)) - 1)
            return Double(samples[Swift.max(0, index)]) / 1000
        }
        self.p50 = at(0.50)
        self.p99 = at(0.99)
        self.p999 = at(0.999)
        self.max = Double(samples.last ?? 0) / 1000
    }

    /// `p50_us`, `p99_us`, `p999_us`, `max_us`.
    var fields: [(String, JSONField)] {
        [
            ("p50_us", .double(self.p50, 2)), ("p99_us", .double(self.p99, 2)), ("p999_us", .double(self.p999, 2)),
            ("max_us", .double(self.max, 1)),
        ]
    }
}
