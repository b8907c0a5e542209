import Canopy
import CanopyCluster
import CanopyCore
import CanopyStorage
import Foundation

/// B18.load: a new leader takes over a namespace of 1M children (a checkpoint in PostgreSQL and
/// 10,000 log records after it) and answers a read: the lease, the load (checkpoint and log
/// tail), opening the database, and the read. Listed only when `CANOPY_CLUSTER_URL` is set.
let clusterLoadScenarios: [Scenario] =
    ProcessInfo.processInfo.environment["CANOPY_CLUSTER_URL"] == nil
    ? []
    : [
        Scenario(name: "B18.load.1M", stores: [.memory]) { _ in
            try blockingAwait { try await clusterTakeover("B18.load.1M", children: Bench.scaled(1_000_000), tail: 10_000) }
        }
    ]

/// Opens `namespace` as `node`'s leader: takes the lease, loads, opens; returns the database and
/// what loading found.
func openLeader(_ store: ClusterStore, _ namespace: String, by node: ClusterNode) async throws -> (Database, DurableStore.Start) {
    guard let lease = try await store.acquire(namespace, by: node) else { throw BenchError("\(namespace) is led by another node") }
    let start = try await store.load(namespace)
    let configuration = Database.Configuration()
    let open = ClusterJournal.opener(
        store: store, lease: lease, start: start, options: configuration.storeOptions(journalClock: SystemJournalClock())
    ) { _ in }
    let db = try Database(configuration: configuration, path: nil) { loop throws(DatabaseError) in open(loop) }
    return (db, start)
}

func clusterTakeover(_ name: String, children: Int, tail: Int) async throws -> BenchResult {
    let store = try await connectBenchCluster()
    let run = UUID().uuidString.prefix(8)
    let namespace = "bench-load-\(run)"
    // The old leader writes the data through the log, checkpoints, writes the tail, and leaves.
    let old = try await store.register(advertise: "http://bench-old-\(run).invalid:1", version: "bench")
    let (writer, _) = try await openLeader(store, namespace, by: old)
    let items = writer.reference(withPath: "items")
    for values in ItemBatches(count: children, item: { ["n": $0, "name": "item \($0 % 100_000)"] }) {
        _ = try await items.updateChildValues(values)
    }
    try await writer.checkpoint()
    let tailCount = max(1, min(tail, children / 2))
    let stride = children / tailCount
    try await withThrowingTaskGroup(of: Void.self) { group in
        for j in 0..<tailCount {
            group.addTask { _ = try await items.child(pushStyleKey(j * stride)).child("n").setValue(-j) }
        }
        try await group.waitForAll()
    }
    writer.close()
    await old.leave()
    log("\(name): \(children) children checkpointed, \(tailCount) log records after it")

    // The new leader: from the lease to the first answered read.
    let new = try await store.register(advertise: "http://bench-new-\(run).invalid:1", version: "bench")
    let t0 = monotonicNanos()
    let (db, start) = try await openLeader(store, namespace, by: new)
    let loaded = secondsSince(t0)
    let probe = try await db.reference(withPath: "items/\(pushStyleKey(children - 1))/n").getData()
    let seconds = secondsSince(t0)
    var check = "ok"
    let count = start.root.child(ChildKey("items")).childCount
    if count != children { check = "FAIL \(count) children loaded, not \(children)" }
    let last = children - 1
    let expected = last % stride == 0 && last / stride < tailCount ? -(last / stride) : last
    if probe.value as? Int != expected { check = "FAIL the probe read \(String(describing: probe.value))" }
    if start.replayedRecords != tailCount { check = "FAIL \(start.replayedRecords) log records replayed, not \(tailCount)" }
    db.close()
    await new.leave()
    await store.close()
    return BenchResult(
        scenario: name, store: .memory, n: children, seconds: seconds,
        extra: [
            ("load_seconds", .double(loaded, 3)), ("checkpoint_bytes", .int(start.checkpointBytes)),
            ("log_records", .int(start.replayedRecords)),
        ],
        check: check)
}
