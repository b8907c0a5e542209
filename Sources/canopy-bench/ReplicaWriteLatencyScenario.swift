import CanopyTestSupport
import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// B19.write.latency: sequential REST PUTs (one keep-alive connection, each sent once the previous
/// was answered) to a namespace's leader and to its follower, which forwards each to the leader
/// and answers once it applied the write's record itself; `rounds` rounds alternate the two,
/// `writes` PUTs each in all. After each follower round, the round's last write must read back
/// at the follower (a client reads its own writes at the node it uses); at the end every write
/// must be at both nodes.
func replicaWriteLatency(_ name: String, writes: Int, rounds: Int) throws -> BenchResult {
    let directory = try BenchDirectory("b19-write")
    defer { directory.remove() }
    let leader = try startReplicaNode(in: directory, label: "leader")
    defer { leader.stop() }
    let follower = try startReplicaNode(in: directory, label: "follower")
    defer { follower.stop() }
    let namespace = replicaNamespace("write")
    try blocking { try await openReplicated(namespace, leader: leader, followers: [follower], path: "/seed", value: "1") }
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { try? group.syncShutdownGracefully() }
    let perRound = max(1, writes / rounds)
    var samples: [String: [UInt64]] = [:]
    var check = "ok"
    let start = monotonicNanos()
    for round in 0..<rounds {
        for (label, node) in [("leader", leader), ("follower", follower)] {
            let prefix = "\(label)-r\(round)"
            let latencies = try timedSequentialRequests(port: node.port, group: group, count: perRound) { i in
                httpRequest("PUT", "/w/\(prefix)-\(i).json?ns=\(namespace)&print=silent", body: "{\"i\":\(i)}")
            }
            samples[label, default: []] += latencies
            if label == "follower" {
                let last = try blocking { try await fetch(port: node.port, "/w/\(prefix)-\(perRound - 1)/i.json?ns=\(namespace)") }
                if last != "\(perRound - 1)" && check == "ok" { check = "FAIL \(prefix)'s last write reads \(last) at the follower" }
            }
        }
    }
    let seconds = secondsSince(start)
    for node in [leader, follower] {
        let shallow = try blocking { try await fetch(port: node.port, "/w.json?ns=\(namespace)&shallow=true") }
        let present = shallow.components(separatedBy: ":true").count - 1
        if present != 2 * rounds * perRound && check == "ok" {
            check = "FAIL \(present) of \(2 * rounds * perRound) writes at port \(node.port)"
        }
    }
    var leaderSamples = samples["leader", default: []]
    var followerSamples = samples["follower", default: []]
    let atLeader = LatencySummary(sortingNanos: &leaderSamples)
    let atFollower = LatencySummary(sortingNanos: &followerSamples)
    var extra: [(String, JSONField)] = [("rounds", .int(rounds))]
    extra += atLeader.fields.map { ("leader_" + $0.0, $0.1) }
    extra += atFollower.fields.map { ("follower_" + $0.0, $0.1) }
    extra += [("p50_ratio", .double(atFollower.p50 / atLeader.p50, 2)), ("p99_ratio", .double(atFollower.p99 / atLeader.p99, 2))]
    return BenchResult(scenario: name, store: .memory, n: 2 * rounds * perRound, seconds: seconds, extra: extra, check: check)
}

/// Sends `request(i)` for i = 0..<count on one keep-alive connection, each once the previous was
/// answered; returns each request's time to its answer, in nanoseconds.
func timedSequentialRequests(port: Int, group: any EventLoopGroup, count: Int, request: @escaping @Sendable (Int) -> ByteBuffer) throws
    -> [UInt64]
{
    // The time each request is made, which is when the previous one's answer was read.
    let stamps = Mutex<[UInt64]>([])
    let outcome = try blocking {
        try await httpLoad(port: port, group: group) { i in
            stamps.withLock { $0.append(monotonicNanos()) }
            return i < count ? request(i) : nil
        }
    }
    let answered = try outcome.get()
    guard answered == count else { throw BenchError("\(answered) of \(count) requests answered") }
    let times = stamps.withLock { $0 }
    return zip(times.dropFirst(), times).map { $0 &- $1 }
}
