import Canopy
import CanopyCore
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Progress and notes go to stderr; stdout carries only the JSON lines.
func log(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// A value of one JSON-line field.
enum JSONField {
    case int(Int)
    /// A number with this many decimals.
    case double(Double, Int)
    case string(String)
    case bool(Bool)

    var text: String {
        switch self {
        case .int(let i): return String(i)
        case .double(let d, let decimals): return d.isFinite ? String(format: "%.\(decimals)f", d) : "null"
        case .string(let s): return jsonQuoted(s)
        case .bool(let b): return b ? "true" : "false"
        }
    }
}

/// A JSON string literal for `s`, as the library writes one.
func jsonQuoted(_ s: String) -> String { JSONWriter.string(.string(s)) }

/// The outcome of one scenario run: the grdb-bench keys, scenario-specific extras, and the check.
struct BenchResult {
    var scenario: String
    var store: Store
    /// Operations timed.
    var n: Int
    /// Wall time until the work was done and applied.
    var seconds: Double
    var extra: [(String, JSONField)] = []
    /// `"ok"` only when the end state was verified.
    var check: String

    var passed: Bool { self.check == "ok" }

    /// One JSON object: `scenario, store, n, seconds, ops_per_s, peak_rss_mb, …extra…, check`.
    var jsonLine: String {
        let opsPerSecond = self.seconds > 0 ? Int((Double(self.n) / self.seconds).rounded()) : 0
        let fields: [(String, JSONField)] =
            [
                ("scenario", .string(self.scenario)), ("store", .string(self.store.rawValue)), ("n", .int(self.n)),
                ("seconds", .double(self.seconds, 4)), ("ops_per_s", .int(opsPerSecond)), ("peak_rss_mb", .double(peakRSSMB(), 1)),
            ] + self.extra + [("check", .string(self.check))]
        return "{" + fields.map { "\(jsonQuoted($0.0)):\($0.1.text)" }.joined(separator: ",") + "}"
    }
}

/// Writes one line to stdout, unbuffered (children share the driver's stdout).
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
