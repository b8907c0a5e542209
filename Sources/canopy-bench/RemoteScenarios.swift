import CanopyRemote
import Dispatch
import Foundation
import Synchronization

// B13: `Database(url:)`, the Swift API against `canopy serve` (a child process, as in B9–B12) over
// the SDKs' WebSocket protocol.

/// The B13 scenarios (appended to `scenarios` in main.swift).
var remoteScenarios: [Scenario] {
    [
        Scenario(name: "B13.remote.writes", stores: [.memory, .journal]) { try remoteWrites("B13.remote.writes", writes: 100_000, $0) },
        Scenario(name: "B13.remote.latency", stores: [.memory]) { try remoteLatency("B13.remote.latency", writes: 2_000, $0) },
        Scenario(name: "B13.remote.coldstart", stores: [.memory]) { try remoteColdStart("B13.remote.coldstart", children: 100_000, $0) },
    ]
}

/// Waits (polling every 100 µs) until `condition` holds, at most `seconds`.
private func pollUntil(_ what: String, seconds: Double = 300, _ condition: () -> Bool) throws {
    let deadline = monotonicNanos() + UInt64(seconds * 1e9)
    while !condition() {
        if monotonicNanos() > deadline { throw BenchError("timed out after \(seconds) s waiting for \(what)") }
        usleep(100)
    }
}

/// B13.remote.writes: one client, one connection, `writes` sets of small objects to distinct
/// keys, issued back to back (pipelined: none waits for the one before), timed until the server
/// has acknowledged the last. Checked: every completion reported success, and the server (read
/// over REST) holds exactly `writes` children.
func remoteWrites(_ name: String, writes: Int, _ store: Store) throws -> BenchResult {
    let count = Bench.scaled(writes)
    let server = try ServerChild(store)
    defer { server.stop() }
    let db = try Database(url: "http://127.0.0.1:\(server.port)?ns=bench")
    defer { db.close() }
    // Connected first: the timing starts with a live connection.
    let connected = Atomic<Bool>(false)
    db.reference(withPath: ".info/connected").observe(.value) { connected.store($0.value as? Bool ?? false, ordering: .releasing) }
    try pollUntil("the connection") { connected.load(ordering: .acquiring) }
    let acknowledged = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    let items = db.reference(withPath: "items")
    let begin = monotonicNanos()
    for i in 0..<count {
        items.child(paddedKey(UInt8(ascii: "k"), i, digits: 7)).setValue(["n": i, "title": "item"]) { error, _ in
            if error != nil { failed.add(1, ordering: .relaxed) }
            acknowledged.add(1, ordering: .releasing)
        }
    }
    let issued = secondsSince(begin)
    try pollUntil("\(count) acknowledgements") { acknowledged.load(ordering: .acquiring) == count }
    let seconds = secondsSince(begin)
    let shallow = try blocking { [port = server.port] in try await fetch(port: port, "/items.json?ns=bench&shallow=true") }
    let keys = (try? JSONSerialization.jsonObject(with: Data(shallow.utf8)) as? [String: Any])?.count ?? -1
    var check = "ok"
    if failed.load(ordering: .relaxed) > 0 {
        check = "FAIL \(failed.load(ordering: .relaxed)) writes failed"
    } else if keys != count {
        check = "FAIL the server holds \(keys) children, not \(count)"
    }
    return BenchResult(
        scenario: name, store: store, n: count, seconds: seconds,
        extra: [("issue_s", .double(issued, 4)), ("local_apply_per_s", .int(Int(Double(count) / max(issued, 1e-9))))], check: check)
}

/// B13.remote.latency: two clients; the writer sets `/latency/v` to a counter and waits until the
/// other client's `.value` observer has seen it, `writes` times: write-to-event latency through
/// the server over loopback. Checked: the observer saw every value, in order.
func remoteLatency(_ name: String, writes: Int, _ store: Store) throws -> BenchResult {
    let count = Bench.scaled(writes)
    let server = try ServerChild(store)
    defer { server.stop() }
    let url = "http://127.0.0.1:\(server.port)?ns=bench"
    let writer = try Database(url: url)
    let reader = try Database(url: url)
    defer {
        writer.close()
        reader.close()
    }
    let last = Atomic<Int>(-1)
    let outOfOrder = Atomic<Int>(0)
    let seenAt = Mutex<[UInt64]>([])
    reader.reference(withPath: "latency/v").observe(.value) { snapshot in
        let now = monotonicNanos()
        guard let value = (snapshot.value as? NSNumber)?.intValue else { return }
        if value != last.load(ordering: .relaxed) + 1 { outOfOrder.add(1, ordering: .relaxed) }
        seenAt.withLock { $0.append(now) }
        last.store(value, ordering: .releasing)
    }
    try writer.reference(withPath: "latency/v").queueSetValue(-1)
    try pollUntil("the reader's first value") { last.load(ordering: .acquiring) == -1 && seenAt.withLock { !$0.isEmpty } }
    seenAt.withLock { $0.removeAll() }
    outOfOrder.store(0, ordering: .relaxed)
    var latencies: [UInt64] = []
    latencies.reserveCapacity(count)
    let begin = monotonicNanos()
    for i in 0..<count {
        let start = monotonicNanos()
        try writer.reference(withPath: "latency/v").queueSetValue(i)
        try pollUntil("value \(i) at the reader", seconds: 30) { last.load(ordering: .acquiring) == i }
        latencies.append(seenAt.withLock { $0[i] } &- start)
    }
    let seconds = secondsSince(begin)
    let summary = LatencySummary(sortingNanos: &latencies)
    let check = outOfOrder.load(ordering: .relaxed) == 0 ? "ok" : "FAIL \(outOfOrder.load(ordering: .relaxed)) values out of order"
    return BenchResult(scenario: name, store: store, n: count, seconds: seconds, extra: summary.fields, check: check)
}

/// B13.remote.coldstart: a node of `children` small objects on the server. A client with a
/// persistent cache observes it once (filling the cache) and closes. Timed: opening the client
/// again and observing the node, until its first `.value` event (from the cache), then until the
/// server's data is confirmed; and, for comparison, a client without a cache until its first event
/// (the server's data). Checked: each first event holds every child.
func remoteColdStart(_ name: String, children: Int, _ store: Store) throws -> BenchResult {
    let count = Bench.scaled(children)
    let server = try ServerChild(store)
    defer { server.stop() }
    let url = "http://127.0.0.1:\(server.port)?ns=bench"
    let body = "{" + (0..<count).map { "\"\(paddedKey(UInt8(ascii: "k"), $0, digits: 7))\":{\"n\":\($0)}" }.joined(separator: ",") + "}"
    _ = try blocking { [port = server.port] in try await fetch(port: port, "/big.json?ns=bench&print=silent", method: "PUT", body: body) }
    let directory = try BenchDirectory("coldstart")
    defer { directory.remove() }
    var configuration = Database.Configuration()
    configuration.persistencePath = directory.databasePath

    /// Opens a client, observes `/big` and returns the seconds until its first event and that event's child count.
    func firstEvent(_ configuration: Database.Configuration) throws -> (seconds: Double, children: Int, db: Database) {
        let begin = monotonicNanos()
        let db = try Database(url: url, configuration: configuration)
        let first = Mutex<(UInt64, Int)?>(nil)
        db.reference(withPath: "big").observe(.value) { snapshot in
            let now = monotonicNanos()
            first.withLock { if $0 == nil { $0 = (now, Int(snapshot.childrenCount)) } }
        }
        try pollUntil("the first event of /big") { first.withLock { $0 != nil } }
        let (at, children) = first.withLock { $0! }
        return (secondsBetween(begin, at), children, db)
    }

    let filling = try firstEvent(configuration)
    try pollUntil("the cache to hold /big") { (try? blockingGetData(filling.db.reference(withPath: "big")))?.childrenCount == UInt(count) }
    filling.db.close()
    let cached = try firstEvent(configuration)
    cached.db.close()
    var plain = Database.Configuration()
    plain.persistencePath = nil
    let uncached = try firstEvent(plain)
    uncached.db.close()
    var check = "ok"
    for (label, got) in [("cached", cached.children), ("uncached", uncached.children), ("filling", filling.children)] where got != count {
        check = "FAIL the \(label) first event held \(got) children, not \(count)"
    }
    return BenchResult(
        scenario: name, store: store, n: 1, seconds: cached.seconds,
        extra: [
            ("children", .int(count)), ("cached_first_event_ms", .double(cached.seconds * 1000, 2)),
            ("server_first_event_ms", .double(uncached.seconds * 1000, 2)),
        ],
        check: check)
}
