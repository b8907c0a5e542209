import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A client of a fan-out scenario: whether it was disconnected, the index of the last write it
/// received, and (when it is sampled) its write-to-receive latencies, read once its loop stopped.
protocol FanOutClient: AnyObject {
    var isClosed: Bool { get }
    var lastReceived: Int { get }
    var sampled: Bool { get }
    var latencies: [UInt64] { get }
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

/// The result of a fan-out scenario `name`: `delivered` events in `seconds`, `extra` then the
/// sampled clients' latency fields, and the check that all `writes` were answered (`written`) and
/// that `complete` of `clients` got everything; the others are said to miss `missed` ("clients
/// got every event"), with how many were disconnected. Stops the clients' `group` first, so that
/// their latencies can be read.
func fanOutResult(
    _ name: String, _ store: Store, delivered: Int, seconds: Double, written: Int, writes: Int, complete: Int,
    clients: [some FanOutClient], stopping group: MultiThreadedEventLoopGroup, missed: String, extra: [(String, JSONField)]
) throws -> BenchResult {
    let dropped = disconnected(clients)
    try group.syncShutdownGracefully()
    let outcome = FanOutOutcome(
        written: written, writes: writes, complete: complete, clients: clients.count,
        incomplete: "\(missed) (\(dropped) disconnected)", latencies: clients.filter(\.sampled).map(\.latencies))
    return BenchResult(
        scenario: name, store: store, n: delivered, seconds: seconds, extra: extra + outcome.latencyFields, check: outcome.check)
}

extension SSECounter: FanOutClient {
    var isClosed: Bool { self.closed.load(ordering: .relaxed) }
    var lastReceived: Int { self.lastIndex.load(ordering: .relaxed) }
}

extension WSBenchClient: FanOutClient {
    var isClosed: Bool { self.closed.load(ordering: .relaxed) }
    var lastReceived: Int { self.lastIndex.load(ordering: .relaxed) }
}
