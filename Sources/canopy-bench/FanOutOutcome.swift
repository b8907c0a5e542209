import Foundation

/// The outcome of a fan-out scenario (writes pushed to many clients): every write answered and
/// every client given every change, and the write-to-receive latencies of the sampled clients.
struct FanOutOutcome {
    let check: String
    /// `p50_write_to_receive_us`, `p99_…`, `p999_…`, `max_…`.
    let latencyFields: [(String, JSONField)]

    /// `complete` of `clients` got everything; `incomplete` says what the others missed (after
    /// "FAIL 3 of 4 "); `latencies`: the sampled clients' timings in nanoseconds.
    init(written: Int, writes: Int, complete: Int, clients: Int, incomplete: String, latencies: [[UInt64]]) {
        if written != writes {
            self.check = "FAIL \(written) of \(writes) writes answered"
        } else if complete != clients {
            self.check = "FAIL \(complete) of \(clients) \(incomplete)"
        } else {
            self.check = "ok"
        }
        var samples = latencies.flatMap { $0 }
        self.latencyFields = LatencySummary(sortingNanos: &samples).fields.map {
            ($0.0.replacingOccurrences(of: "_us", with: "_write_to_receive_us"), $0.1)
        }
    }
}
