import CanopyTestSupport
import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// B19.idle.memory: a server's resident memory per idle SDK connection (WebSocket, one listen
/// each, as B11's figure `idle_rss_per_connection_b`), on a follower, on the namespace's leader
/// and on a single `canopy serve --db DIR`, all this build's `canopy`, each a new process,
/// alternating twice. Then one write (at the leader, or the single node) must reach every
/// connection: they are idle, not dead.
func replicaIdleMemory(_ name: String, connections requested: Int) throws -> BenchResult {
    raiseOpenFiles()
    let connections = Bench.scaled(requested)
    let directory = try BenchDirectory("b19-idle")
    defer { directory.remove() }
    var perConnection: [IdleSetUp: [Double]] = [:]
    var check = "ok"
    for index in 0..<2 {
        for setUp in IdleSetUp.allCases {
            let (bytes, outcome) = try idleRound(setUp, connections: connections, in: directory, label: "\(setUp)-\(index)")
            perConnection[setUp, default: []].append(bytes)
            if outcome != "ok" && check == "ok" { check = "\(outcome) (\(setUp))" }
            log("\(name) \(setUp) round \(index + 1): \(Int(bytes)) bytes per idle connection")
        }
    }
    // Each set-up's smaller figure (the other run's allocator kept more).
    let least = perConnection.mapValues { $0.min()! }
    var extra: [(String, JSONField)] = [("connections", .int(connections))]
    for setUp in IdleSetUp.allCases {
        let rounds = perConnection[setUp]!.map { String(Int($0)) }.joined(separator: " ")
        extra += [("\(setUp)_rss_per_connection_b", .double(least[setUp]!, 0)), ("\(setUp)_rounds_b", .string(rounds))]
    }
    extra.append(("follower_single_ratio", .double(least[.follower]! / least[.single]!, 2)))
    return BenchResult(
        scenario: name, store: .memory, n: connections, seconds: 0, extra: extra,
        check: check)
}

/// Where B19.idle.memory's connections are held.
enum IdleSetUp: String, CaseIterable {
    case single
    case leader
    case follower
}

/// One round: new processes for `setUp`, `connections` idle listening WebSocket connections to the
/// one that holds them; the resident memory they added per connection, and the check.
func idleRound(_ setUp: IdleSetUp, connections: Int, in directory: BenchDirectory, label: String) throws -> (Double, String) {
    let namespace = replicaNamespace("idle")
    let initial = #"{"i":0,"w":0}"#
    let writer: ServeProcess
    let holder: ServeProcess
    var follower: ServeProcess?
    switch setUp {
    case .single:
        let port = try freeLoopbackPort()
        writer = try ServeProcess.bench(
            port: port, arguments: ["--db", directory.path + "/\(label)"], logPath: directory.path + "/\(label).log")
        holder = writer
    case .leader, .follower:
        writer = try startReplicaNode(in: directory, label: "\(label)-leader")
        if setUp == .follower { follower = try startReplicaNode(in: directory, label: "\(label)-follower") }
        holder = follower ?? writer
    }
    defer {
        follower?.stop()
        writer.stop()
    }
    let followers = follower.map { [$0] } ?? []
    try blocking { try await openReplicated(namespace, leader: writer, followers: followers, path: "/fan", value: initial) }
    usleep(200_000)
    let baseline = holder.rssBytes
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let listen = #"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/fan","h":""}}}"#
    let upgrade = WebSocketUpgrade.request(namespace: namespace)
    let clients = (0..<connections).map { _ in WSBenchClient(sampled: false, opening: [listen], upgradeRequest: upgrade) }
    do {
        try connectWebSocketClients(clients, port: holder.port, group: group) {
            $0.pushes.load(ordering: .relaxed) >= 1 && $0.acks.load(ordering: .relaxed) >= 1
        }
    } catch {
        try? group.syncShutdownGracefully()
        throw BenchError("\(error): \(holder.logTail)")
    }
    usleep(500_000)
    let bytes = Double(holder.rssBytes - baseline) / Double(connections)
    // One write, which every connection must get.
    _ = try blocking {
        try await fetch(port: writer.port, "/fan.json?ns=\(namespace)&print=silent", method: "PUT", body: #"{"i":1,"w":0}"#)
    }
    waitForDelivery(to: clients, of: 1)
    let dropped = disconnected(clients)
    let complete = clients.filter { $0.lastIndex.load(ordering: .relaxed) == 1 && $0.pushes.load(ordering: .relaxed) == 2 }.count
    try group.syncShutdownGracefully()
    return (
        bytes, complete == connections ? "ok" : "FAIL \(complete) of \(connections) connections got the write (\(dropped) disconnected)"
    )
}
