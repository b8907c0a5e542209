import Canopy
import CanopyCluster
import CanopyCore
import CanopyStorage
import Foundation

/// B18.write: writes through the engine to the cluster's PostgreSQL log (a leader's database with
/// the log as its journal), each writer awaiting its own acknowledgement, from 1, 8 and 50
/// writers; and the same 50 writers on a local journal with `.always` (fsync before each
/// acknowledgement), in the same run, for the ratio. Listed only when `CANOPY_CLUSTER_URL` is set.
let clusterWriteScenarios: [Scenario] =
    ProcessInfo.processInfo.environment["CANOPY_CLUSTER_URL"] == nil
    ? []
    : [(1, 2_000), (8, 16_000), (50, 50_000)].map { writers, writes in
        Scenario(name: "B18.write.\(writers)writers", stores: [.memory]) { _ in
            try blockingAwait { try await clusterWrites("B18.write.\(writers)writers", writers: writers, writes: Bench.scaled(writes)) }
        }
    } + [
        Scenario(name: "B18.write.local.50writers", stores: [.journal]) { _ in
            let directory = try BenchDirectory("b18-local")
            defer { directory.remove() }
            let db = try openDurable(directory.databasePath, .always)
            defer { db.close() }
            return try blockingAwait {
                try await timedWrites("B18.write.local.50writers", db, store: .journal, writers: 50, writes: Bench.scaled(50_000))
            }
        }
    ]

/// `writes` sets of a small object (about a `push` of a chat message) at distinct keys from
/// `writers` concurrent writers on a new leader's database; checks that the log holds each once.
func clusterWrites(_ name: String, writers: Int, writes: Int) async throws -> BenchResult {
    let store = try await connectBenchCluster()
    let run = UUID().uuidString.prefix(8)
    let node = try await store.register(advertise: "http://bench-write-\(run).invalid:1", version: "bench")
    let namespace = "bench-write-\(run)"
    let (db, _) = try await openLeader(store, namespace, by: node)
    var result = try await timedWrites(name, db, store: .memory, writers: writers, writes: writes)
    db.close()
    let head = try await store.head(of: namespace)
    if head != Int64(result.n) && result.check == "ok" { result.check = "FAIL the log's head is \(head), not \(result.n)" }
    await node.leave()
    await store.close()
    return result
}

/// Times `writes` awaited sets from `writers` concurrent writers; checks every value afterwards.
func timedWrites(_ name: String, _ db: Database, store: Store, writers: Int, writes: Int) async throws -> BenchResult {
    let perWriter = max(1, writes / writers)
    let total = perWriter * writers
    let messages = db.reference(withPath: "messages")
    let began = monotonicNanos()
    var latencies = try await timedConcurrently(writers: writers, each: perWriter) { writer, i in
        _ = try await messages.child("w\(writer)-\(i)").setValue(["from": "user \(writer)", "text": "message \(i)", "n": i])
    }
    let seconds = secondsSince(began)
    let stored = try await messages.getData()
    var check = stored.childrenCount == total ? "ok" : "FAIL \(stored.childrenCount) of \(total) messages stored"
    if let last = stored.childSnapshot(forPath: "w\(writers - 1)-\(perWriter - 1)/n").value as? Int, last != perWriter - 1 {
        check = "FAIL the last message holds \(last)"
    }
    let summary = LatencySummary(sortingNanos: &latencies)
    return BenchResult(
        scenario: name, store: store, n: total, seconds: seconds, extra: [("writers", .int(writers))] + summary.fields, check: check)
}
