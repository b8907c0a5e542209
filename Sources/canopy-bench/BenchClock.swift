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

/// CPU seconds (user + system) used so far by this process's thread named `name` (the first one),
/// from `/proc/self/task/*/stat`, in clock ticks (10 ms); `nil` when there is none. On a shared
/// machine a thread's CPU time varies much less than the wall clock with the others' load.
func threadCPUSeconds(named name: String) -> Double? {
    guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return nil }
    for task in tasks.sorted() {
        guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
            comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
            let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { continue }
        // After "pid (comm)": state is field 3, utime 14 and stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
    return nil
}
