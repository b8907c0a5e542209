import CanopyTestSupport
import Foundation

/// B19: replicas (DocC article *Cluster*, section "Replicas"): a follower's log apply rate, the
/// latency of writes it forwards, fan-out spread over followers, and its memory per idle
/// connection. Each runs this build's `canopy serve --cluster URL --replicas` nodes on 127.0.0.1,
/// one port each. Listed only when `CANOPY_CLUSTER_URL` is set.
let replicaScenarios: [Scenario] =
    ProcessInfo.processInfo.environment["CANOPY_CLUSTER_URL"] == nil
    ? []
    : [
        Scenario(name: "B19.apply", stores: [.memory]) { _ in
            try blockingAwait { try await replicaApply("B19.apply", records: Bench.scaled(200_000), rounds: 2) }
        },
        Scenario(name: "B19.write.latency", stores: [.memory]) { _ in
            try replicaWriteLatency("B19.write.latency", writes: Bench.scaled(2_000), rounds: 4)
        },
        Scenario(name: "B19.fanout", stores: [.memory]) { _ in
            try replicaFanOut("B19.fanout", clients: 1_000, writesPerSecond: 100)
        },
        Scenario(name: "B19.idle.memory", stores: [.memory]) { _ in
            try replicaIdleMemory("B19.idle.memory", connections: 2_000)
        },
    ]

/// Starts a `canopy serve --cluster URL --replicas` node of this build on a free port of
/// 127.0.0.1, advertised there, its log in `directory` under `label`.
func startReplicaNode(in directory: BenchDirectory, label: String) throws -> ServeProcess {
    let url = ProcessInfo.processInfo.environment["CANOPY_CLUSTER_URL"] ?? ""
    let port = try freeLoopbackPort()
    return try ServeProcess.bench(
        port: port, arguments: ["--cluster", url, "--advertise", "http://127.0.0.1:\(port)", "--replicas"],
        logPath: directory.path + "/\(label).log")
}

/// A new namespace name for a B19 round.
func replicaNamespace(_ label: String) -> String { "bench-\(label)-\(UUID().uuidString.prefix(8).lowercased())" }

/// Makes `leader` lead `namespace` (its first write, `value` at `path`) and each of `followers`
/// follow it (a read of `path` there, which must answer `value`).
func openReplicated(_ namespace: String, leader: ServeProcess, followers: [ServeProcess], path: String, value: String) async throws {
    let put = await benchRequest(host: "127.0.0.1", port: leader.port, "PUT", "\(path).json?ns=\(namespace)", body: value)
    guard put?.status == 200 else {
        throw BenchError("the leader answered \(put.map { "\($0.status) \($0.body)" } ?? "nothing") to the first write: \(leader.logTail)")
    }
    for follower in followers {
        let read = await benchRequest(host: "127.0.0.1", port: follower.port, "GET", "\(path).json?ns=\(namespace)")
        guard read?.status == 200, read?.body == value else {
            throw BenchError(
                "a follower answered \(read.map { "\($0.status) \($0.body)" } ?? "nothing") to the first read: \(follower.logTail)")
        }
    }
}

/// The follower's `canopy_replica_applied_records` and `canopy_replica_lag_records` of
/// `namespace`, from its `/.metrics`; `nil` when it does not follow it.
func replicaProgress(port: Int, _ namespace: String) async throws -> (applied: Int64, lag: Int64)? {
    let text = try await fetch(port: port, "/.metrics")
    func value(_ metric: String) -> Int64? {
        let prefix = "\(metric){namespace=\"\(namespace)\"} "
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return nil }
        return Double(line.dropFirst(prefix.count)).map { Int64($0) }
    }
    guard let applied = value("canopy_replica_applied_records"), let lag = value("canopy_replica_lag_records") else { return nil }
    return (applied, lag)
}
