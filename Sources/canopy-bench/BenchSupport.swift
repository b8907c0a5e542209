import Canopy
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// Measurement helpers shared by every scenario: the scale knob, a monotonic clock, resident-set
// sizes, deterministic data, the blocking read that marks "all writes applied", and the JSON line.

/// Where a scenario keeps its data.
enum Store: String, CaseIterable, Sendable {
    case memory
    /// A durable database (`Database(path:)`) in a fresh temporary directory, removed afterwards.
    case journal
}

enum Bench {
    /// `CANOPY_BENCH_SCALE` multiplies every N (smoke runs use 0.05).
    static let scale: Double = {
        guard let text = ProcessInfo.processInfo.environment["CANOPY_BENCH_SCALE"], let value = Double(text), value > 0 else { return 1 }
        return value
    }()

    /// `n` times the scale, at least 1.
    static func scaled(_ n: Int) -> Int { max(1, Int((Double(n) * scale).rounded())) }

    /// `CANOPY_BENCH_REPEAT` multiplies the updates of the B14 scenarios, not their data, so that
    /// a profile of a run samples the updates more than the setup (1 by default).
    static let repeatUpdates: Int = {
        guard let text = ProcessInfo.processInfo.environment["CANOPY_BENCH_REPEAT"], let value = Int(text), value > 0 else { return 1 }
        return value
    }()
}
