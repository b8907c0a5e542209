import Foundation
import Synchronization

/// A client of a fan-out scenario: whether it was disconnected, and the index of the last write
/// it received.
protocol FanOutClient: AnyObject {
    var isClosed: Bool { get }
    var lastReceived: Int { get }
}

/// Waits (60 s at most) until every client still connected received write `last`.
func waitForDelivery(to clients: [some FanOutClient], of last: Int) {
    let deadline = monotonicNanos() + 60_000_000_000
    while monotonicNanos() < deadline {
        if !clients.contains(where: { !$0.isClosed && $0.lastReceived != last }) { break }
        usleep(5_000)
    }
}

/// How many of `clients` were disconnected.
func disconnected(_ clients: [some FanOutClient]) -> Int { clients.filter(\.isClosed).count }

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

extension SSECounter: FanOutClient {
    var isClosed: Bool { self.closed.load(ordering: .relaxed) }
    var lastReceived: Int { self.lastIndex.load(ordering: .relaxed) }
}

extension WSBenchClient: FanOutClient {
    var isClosed: Bool { self.closed.load(ordering: .relaxed) }
    var lastReceived: Int { self.lastIndex.load(ordering: .relaxed) }
}
