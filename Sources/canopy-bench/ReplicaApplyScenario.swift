import CanopyCluster
import CanopyCore
import CanopyTestSupport
import Foundation
import NIOCore

/// B19.apply: how fast a follower applies the log. This process leads a namespace (registered as
/// a node, its lease renewed as a node's heartbeat does); a `canopy serve --replicas` node
/// follows it from its first record. Each round appends `records` sets of a small integer (at
/// 10,000 keys) in one statement, so that they all commit at once and the follower is woken once,
/// then polls the follower's `/.metrics` until `canopy_replica_applied_records` reaches the head:
/// the rate is records over the time from the append's return to that. Also reports, measured
/// here afterwards, the rate of the follower's two steps outside its engine: reading the records
/// from PostgreSQL in its pages of 10,000, and decoding them.
func replicaApply(_ name: String, records: Int, rounds: Int) async throws -> BenchResult {
    let directory = try BenchDirectory("b19-apply")
    defer { directory.remove() }
    let store = try await connectBenchCluster()
    let namespace = replicaNamespace("apply")
    let node = try await store.register(advertise: "http://\(namespace).invalid:1", version: "bench")
    let heartbeat = Task {
        while !Task.isCancelled {
            try? await node.heartbeat()
            try? await Task.sleep(for: .milliseconds(500))
        }
    }
    let follower = try startReplicaNode(in: directory, label: "follower")
    defer { follower.stop() }
    var outcome: Result<BenchResult, any Error>
    do {
        guard let lease = try await store.acquire(namespace, by: node) else { throw BenchError("\(namespace) is led by another node") }
        outcome = .success(try await applyRounds(name, store, lease, follower: follower, records: records, rounds: rounds))
    } catch {
        outcome = .failure(error)
    }
    heartbeat.cancel()
    await node.leave()
    await store.close()
    return try outcome.get()
}

/// Record `sequence` of B19.apply: `/a/k<sequence % 10,000>` set to `sequence`.
private func applyRecord(_ sequence: Int64, now: Int64) -> ByteBuffer {
    let path = DatabasePath([ChildKey("a"), ChildKey("k\(sequence % 10_000)")])
    return LogRecord.encode(.set(path, WriteValue(node: .leaf(.int(sequence)))), sequence: UInt64(sequence), now: now)
}

private func applyRounds(_ name: String, _ store: ClusterStore, _ lease: NamespaceLease, follower: ServeProcess, records: Int, rounds: Int)
    async throws -> BenchResult
{
    let namespace = lease.namespace
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    try await store.append([applyRecord(1, now: now)], from: 1, under: lease)
    let opened = await benchRequest(host: "127.0.0.1", port: follower.port, "GET", "/a/k1.json?ns=\(namespace)")
    guard opened?.status == 200, opened?.body == "1" else {
        throw BenchError("the follower answered \(opened.map { "\($0.status) \($0.body)" } ?? "nothing"): \(follower.logTail)")
    }
    var next: Int64 = 2
    var rates: [Double] = []
    var cpuPerRecord: [Double] = []
    var firstProgressMillis: [Double] = []
    var check = "ok"
    for round in 0..<rounds {
        let batch = (0..<Int64(records)).map { applyRecord(next + $0, now: now) }
        let head = next + Int64(records) - 1
        let cpu = follower.cpuSeconds
        let appendStart = monotonicNanos()
        try await store.append(batch, from: next, under: lease)
        let committed = monotonicNanos()
        var firstProgress: UInt64?
        let deadline = committed + 300_000_000_000
        while true {
            guard let progress = try await replicaProgress(port: follower.port, namespace) else {
                throw BenchError("the follower no longer follows \(namespace): \(follower.logTail)")
            }
            let at = monotonicNanos()
            if firstProgress == nil && progress.applied >= next { firstProgress = at }
            if progress.applied >= head { break }
            guard at < deadline else { throw BenchError("the follower applied \(progress.applied) of \(head) in 300 s") }
            try await Task.sleep(for: .milliseconds(5))
        }
        let seconds = secondsSince(committed)
        rates.append(Double(records) / seconds)
        cpuPerRecord.append((follower.cpuSeconds - cpu) / Double(records) * 1e6)
        firstProgressMillis.append(Double((firstProgress ?? committed) - committed) / 1e6)
        log(
            "\(name) round \(round + 1): appended \(records) in \(String(format: "%.2f", secondsBetween(appendStart, committed))) s, "
                + "applied in \(String(format: "%.3f", seconds)) s: \(Int(rates.last!)) records/s")
        // The end state: the last record's key holds it, and nothing is left to apply.
        let last = await benchRequest(host: "127.0.0.1", port: follower.port, "GET", "/a/k\(head % 10_000).json?ns=\(namespace)")
        let progress = try await replicaProgress(port: follower.port, namespace)
        if last?.body != "\(head)" {
            check = "FAIL round \(round + 1): /a/k\(head % 10_000) reads \(last?.body ?? "nothing") at the follower, not \(head)"
        } else if progress?.applied != head || progress?.lag != 0 {
            check = "FAIL round \(round + 1): the follower reports \(String(describing: progress)), not \(head) applied and no lag"
        }
        next = head + 1
    }
    // The follower's steps outside its engine, here (nothing else runs now): reading the last
    // round's records from PostgreSQL in pages of 10,000, and decoding them.
    let first = next - Int64(records) - 1
    var read: [LogRecord] = []
    read.reserveCapacity(records)
    let readStart = monotonicNanos()
    while read.count < records {
        let page = try await store.read(namespace, after: first + Int64(read.count), limit: 10_000)
        if page.isEmpty { break }
        read += page
    }
    let readSeconds = secondsSince(readStart)
    let decodeStart = monotonicNanos()
    for record in read { _ = try LogRecord.decode(record.bytes, in: "record \(record.seq)") }
    let decodeSeconds = secondsSince(decodeStart)
    if read.count != records && check == "ok" { check = "FAIL \(read.count) of \(records) records read back" }
    let best = rates.indices.max { rates[$0] < rates[$1] }!
    return BenchResult(
        scenario: name, store: .memory, n: records, seconds: Double(records) / rates[best],
        extra: [
            ("rounds", .int(rounds)), ("records_per_s", .int(Int(rates[best]))),
            ("round_records_per_s", .string(rates.map { String(Int($0)) }.joined(separator: " "))),
            ("follower_cpu_us_per_record", .double(cpuPerRecord[best], 3)),
            ("first_applied_after_ms", .double(firstProgressMillis[best], 1)),
            ("record_bytes", .int(read.first?.bytes.readableBytes ?? 0)),
            ("pg_read_records_per_s", .int(Int(Double(read.count) / readSeconds))),
            ("decode_records_per_s", .int(Int(Double(read.count) / decodeSeconds))),
        ], check: check)
}
