import CanopyCluster
import Foundation
import Logging
import NIOCore

/// B18.log: writes through the cluster's PostgreSQL log alone (DocC article *Cluster*): a leader's
/// group-committed, fenced appends from 1, 8 and 50 concurrent writers, each awaiting its own
/// commit, on the PostgreSQL that `CANOPY_CLUSTER_URL` names (`.ci/postgres start` makes one).
/// Listed only when that variable is set.
let clusterLogScenarios: [Scenario] =
    ProcessInfo.processInfo.environment["CANOPY_CLUSTER_URL"] == nil
    ? []
    : [(1, 2_000), (8, 20_000), (50, 50_000)].map { writers, records in
        let name = "B18.log.\(writers)writers"
        return Scenario(name: name, stores: [.memory]) { _ in
            try blockingAwait { try await clusterLogAppends(name, writers: writers, records: Bench.scaled(records)) }
        }
    }

/// Appends `records` records of 200 bytes (about a journal record of a small `push`) from
/// `writers` concurrent writers under one lease; checks that the log holds each once, in order.
func clusterLogAppends(_ name: String, writers: Int, records: Int) async throws -> BenchResult {
    let store = try await connectBenchCluster()
    let run = UUID().uuidString.prefix(8)
    let node = try await store.register(advertise: "http://bench-\(run).invalid:1", version: "bench")
    let namespace = "bench-\(run)"
    guard let lease = try await store.acquire(namespace, by: node) else { throw BenchError("\(namespace) is led by another node") }
    let appender = LogAppender(store: store, lease: lease, next: 1)
    let record = ByteBuffer(bytes: [UInt8](repeating: 0x61, count: 200))
    let perWriter = max(1, records / writers)
    let total = perWriter * writers
    let start = monotonicNanos()
    var latencies = try await timedConcurrently(writers: writers, each: perWriter) { _, _ in _ = try await appender.append(record) }
    let seconds = secondsSince(start)
    // The end state: every record once, at positions 1…total, under this lease's epoch.
    var seen = 0
    var next: Int64 = 1
    var check = "ok"
    while seen < total {
        let page = try await store.read(namespace, after: Int64(seen), limit: 10_000)
        if page.isEmpty { break }
        for entry in page {
            if entry.seq != next || entry.epoch != lease.epoch || entry.bytes != record { check = "FAIL record \(entry.seq)" }
            next += 1
        }
        seen += page.count
    }
    let head = try await store.head(of: namespace)
    if seen != total || head != Int64(total) { check = "FAIL \(seen) of \(total) records in the log, head \(head)" }
    let batches = appender.batchesCommitted
    appender.close()
    await node.leave()
    await store.close()
    let summary = LatencySummary(sortingNanos: &latencies)
    return BenchResult(
        scenario: name, store: .memory, n: total, seconds: seconds,
        extra: [
            ("writers", .int(writers)), ("batches", .int(batches)),
            ("records_per_batch", .double(Double(total) / Double(max(1, batches)), 1)),
        ]
            + summary.fields,
        check: check)
}

/// The PostgreSQL that `CANOPY_CLUSTER_URL` names, quiet.
func connectBenchCluster() async throws -> ClusterStore {
    let url = ProcessInfo.processInfo.environment["CANOPY_CLUSTER_URL"] ?? ""
    var logger = Logger(label: "canopy.bench.cluster")
    logger.logLevel = .critical
    return try await ClusterStore.connect(try ClusterConfiguration(url: url), logger: logger)
}

/// Runs `operation(writer, i)` for `i` in `0..<each` in each of `writers` concurrent tasks, each
/// awaiting its operations in turn; returns every operation's latency in nanoseconds.
func timedConcurrently(writers: Int, each: Int, _ operation: @escaping @Sendable (Int, Int) async throws -> Void) async throws
    -> [UInt64]
{
    try await withThrowingTaskGroup(of: [UInt64].self) { group in
        for writer in 0..<writers {
            group.addTask {
                var samples: [UInt64] = []
                samples.reserveCapacity(each)
                for i in 0..<each {
                    let began = monotonicNanos()
                    try await operation(writer, i)
                    samples.append(monotonicNanos() &- began)
                }
                return samples
            }
        }
        var all: [UInt64] = []
        for try await samples in group { all += samples }
        return all
    }
}
