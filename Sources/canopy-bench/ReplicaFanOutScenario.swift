import CanopyTestSupport
import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// B19.fanout: B9's fan-out (`clients` event streams on one location, a REST writer paced to
/// `writesPerSecond` at the leader) with the streams all on the namespace's leader, or spread
/// evenly over two followers; the same three nodes for both, alternating twice. Two cores cannot
/// show the fan-out scaling with the nodes, so the figure is each node's CPU per event it
/// delivered (the leader's, for its streams and the writes; each follower's, for its streams and
/// following the log), and the write-to-receive latency, which the followers lengthen by the
/// log's round trip.
func replicaFanOut(_ name: String, clients requested: Int, writesPerSecond: Int) throws -> BenchResult {
    raiseOpenFiles()
    let clients = Bench.scaled(requested)
    let directory = try BenchDirectory("b19-fanout")
    defer { directory.remove() }
    let leader = try startReplicaNode(in: directory, label: "leader")
    defer { leader.stop() }
    let followers = try (1...2).map { try startReplicaNode(in: directory, label: "follower\($0)") }
    defer { for follower in followers { follower.stop() } }
    var best: [Bool: FanOutRound] = [:]
    var check = "ok"
    for index in 0..<2 {
        for spread in [false, true] {
            let round = try fanOutRound(
                name, clients: clients, writesPerSecond: writesPerSecond, leader: leader, streamNodes: spread ? followers : [leader])
            if !round.result.passed && check == "ok" { check = "\(round.result.check) (\(spread ? "followers" : "leader") round)" }
            log(
                "\(name) \(spread ? "followers" : "leader") round \(index + 1): \(round.result.n) events, "
                    + round.cpuPerEvent.map { String(format: "%.2f", $0) }.joined(separator: " / ") + " µs CPU per event")
            if best[spread].map({ $0.totalCPUPerEvent > round.totalCPUPerEvent }) ?? true { best[spread] = round }
        }
    }
    let single = best[false]!
    let spread = best[true]!
    func latency(_ round: FanOutRound, _ prefix: String) -> [(String, JSONField)] {
        round.result.extra.filter { $0.0.hasPrefix("p50_") || $0.0.hasPrefix("p99_") }.map { (prefix + $0.0, $0.1) }
    }
    return BenchResult(
        scenario: name, store: .memory, n: spread.result.n, seconds: spread.result.seconds,
        extra: [
            ("clients", .int(clients)), ("writes_per_s", .int(writesPerSecond)),
            ("leader_events_per_s", .int(Int(single.eventsPerSecond))), ("followers_events_per_s", .int(Int(spread.eventsPerSecond))),
            ("leader_only_cpu_us_per_event", .double(single.cpuPerEvent[0], 2)),
            ("spread_leader_cpu_us_per_event", .double(spread.cpuPerEvent[0], 2)),
            ("spread_follower1_cpu_us_per_event", .double(spread.cpuPerEvent[1], 2)),
            ("spread_follower2_cpu_us_per_event", .double(spread.cpuPerEvent[2], 2)),
        ] + latency(single, "leader_") + latency(spread, "followers_"),
        check: check)
}

/// One round of B19.fanout: its fan-out result, and the CPU per delivered event of the leader
/// (all events) and of each node the streams were on (its own streams' events) when that is not
/// the leader.
struct FanOutRound {
    var result: BenchResult
    var cpuPerEvent: [Double]
    var totalCPUSeconds: Double
    var eventsPerSecond: Double { Double(self.result.n) / self.result.seconds }
    var totalCPUPerEvent: Double { self.totalCPUSeconds / Double(max(1, self.result.n)) * 1e6 }
}

/// B9's fan-out on a new namespace led by `leader`, the streams spread evenly over `streamNodes`.
func fanOutRound(_ name: String, clients: Int, writesPerSecond: Int, leader: ServeProcess, streamNodes: [ServeProcess]) throws
    -> FanOutRound
{
    let namespace = replicaNamespace("fanout")
    let following = streamNodes.filter { $0.port != leader.port }
    try blocking { try await openReplicated(namespace, leader: leader, followers: following, path: "/fan", value: #"{"i":0,"t":0}"#) }
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let counters = (0..<clients).map { SSECounter(sampled: $0 % 10 == 0, target: "/fan.json?ns=\(namespace)") }
    do {
        try connectAll(counters, group: group, port: { streamNodes[$0 % streamNodes.count].port }, within: 60, what: "streams") {
            $0.events.load(ordering: .relaxed) >= 1
        }
    } catch {
        try? group.syncShutdownGracefully()
        throw error
    }
    usleep(200_000)
    let initialEvents = counters.map { $0.events.load(ordering: .relaxed) }

    let duration = max(1.0, 10 * Bench.scale)
    let totalWrites = Int(Double(writesPerSecond) * duration)
    let writerGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { try? writerGroup.syncShutdownGracefully() }
    let nodes = [leader] + following
    let startCPU = nodes.map(\.cpuSeconds)
    let start = monotonicNanos()
    let written = try pacedWrites(
        port: leader.port, group: writerGroup, count: totalWrites, start: start, interval: 1_000_000_000 / UInt64(writesPerSecond)
    ) { i in
        httpRequest("PUT", "/fan.json?ns=\(namespace)&print=silent", body: "{\"i\":\(i + 1),\"t\":\(monotonicNanos())}")
    }
    waitForDelivery(to: counters, of: totalWrites)
    let seconds = secondsSince(start)
    let cpu = zip(nodes, startCPU).map { $0.cpuSeconds - $1 }
    // The events each node delivered.
    var delivered = Array(repeating: 0, count: streamNodes.count)
    for (n, counter) in counters.enumerated() {
        delivered[n % streamNodes.count] += counter.events.load(ordering: .relaxed) - initialEvents[n]
    }
    let total = delivered.reduce(0, +)
    let complete = counters.filter {
        $0.lastIndex.load(ordering: .relaxed) == totalWrites && $0.events.load(ordering: .relaxed) == totalWrites + 1
    }.count
    let result = try fanOutResult(
        name, .memory, delivered: total, seconds: seconds, written: written, writes: totalWrites, complete: complete, clients: counters,
        stopping: group, missed: "clients got every event", extra: [])
    var cpuPerEvent = [cpu[0] / Double(max(1, total)) * 1e6]
    if !following.isEmpty {
        cpuPerEvent += zip(cpu.dropFirst(), delivered).map { $0 / Double(max(1, $1)) * 1e6 }
    }
    return FanOutRound(result: result, cpuPerEvent: cpuPerEvent, totalCPUSeconds: cpu.reduce(0, +))
}
