import Canopy
import Foundation

/// B3a: one value observer on each of `listeners` distinct posts among 100,000; 20,000 updates
/// spread over the observed posts. An update must cost nothing for observers elsewhere.
func rowFanOut(_ name: String, listeners: Int, _ store: Store) throws -> BenchResult {
    let db = try Database.inMemory()
    defer { db.close() }
    let posts = db.reference(withPath: "posts")
    let count = Bench.scaled(100_000)
    let observed = min(count, Bench.scaled(listeners))
    var initial: [String: JSONValue] = [:]
    for i in 0..<count { initial[paddedKey(UInt8(ascii: "p"), i, digits: 7)] = ["starCount": 0, "title": "post"] }
    try posts.queueSetValue(JSONValue.object(initial))
    initial = [:]
    var rng = BenchRNG(seed: 3)
    let observedIndices = rng.sampleIndices(observed, below: count)
    final class Counts: @unchecked Sendable {  // loop thread only, read after a barrier
        var events = 0
        var last: [Int64]
        init(_ n: Int) { self.last = Array(repeating: -1, count: n) }
    }
    let counts = Counts(observedIndices.count)
    let rssBefore = trimmedRSSBytes()
    for (slot, index) in observedIndices.enumerated() {
        posts.child(paddedKey(UInt8(ascii: "p"), index, digits: 7)).observe(.value) { snapshot in
            counts.events += 1
            counts.last[slot] = snapshot.json["starCount"]?.int64Value ?? -1
        }
    }
    _ = try blockingGetData(posts.child("p0000000"))
    let perListener = Double(trimmedRSSBytes() - rssBefore) / Double(observed)
    let initialEvents = counts.events
    let updates = Bench.scaled(20_000)
    var expectedLast: [Int: Int64] = [:]
    let plan = (0..<updates).map { u -> (Int, Int64) in
        let slot = rng.next(below: observedIndices.count)
        expectedLast[slot] = Int64(u + 1)
        return (observedIndices[slot], Int64(u + 1))
    }
    let start = monotonicNanos()
    for (index, value) in plan {
        try posts.child(paddedKey(UInt8(ascii: "p"), index, digits: 7)).child("starCount").queueSetValue(value)
    }
    _ = try blockingGetData(posts.child("p0000000"))
    let seconds = secondsSince(start)
    var check = "ok"
    if counts.events - initialEvents != updates { check = "FAIL \(counts.events - initialEvents) events for \(updates) updates" }
    for (slot, value) in expectedLast where counts.last[slot] != value {
        check = "FAIL observer \(slot) holds \(counts.last[slot]), not \(value)"
    }
    return BenchResult(
        scenario: name, store: store, n: updates, seconds: seconds,
        extra: [
            ("posts", .int(count)), ("listeners", .int(observed)), ("events", .int(counts.events - initialEvents)),
            ("rss_per_listener_b", .double(perListener, 0)),
        ],
        check: check)
}

/// B3b: `listeners` value observers on one path; 10,000 writes, each delivered to all of them.
func broadcast(_ name: String, listeners: Int, _ store: Store) throws -> BenchResult {
    let db = try Database.inMemory()
    defer { db.close() }
    let room = db.reference(withPath: "rooms/r1/last")
    let count = Bench.scaled(listeners)
    final class Calls: @unchecked Sendable {  // loop thread only, read after a barrier
        var calls = 0
        var lastSum: Int64 = 0
    }
    let calls = Calls()
    for _ in 0..<count {
        room.observe(.value) { snapshot in
            calls.calls += 1
            calls.lastSum &+= snapshot.json.int64Value ?? 0
        }
    }
    _ = try blockingGetData(room)
    let initial = calls.calls
    calls.lastSum = 0
    let writes = Bench.scaled(count >= 10_000 ? 2_000 : 10_000)
    let start = monotonicNanos()
    for i in 1...writes { try room.queueSetValue(i) }
    _ = try blockingGetData(room)
    let seconds = secondsSince(start)
    let delivered = calls.calls - initial
    let expectedSum = Int64(count) * Int64(writes) * Int64(writes + 1) / 2
    let check =
        delivered == writes * count && calls.lastSum == expectedSum ? "ok" : "FAIL \(delivered) callbacks, expected \(writes * count)"
    return BenchResult(
        scenario: name, store: store, n: delivered, seconds: seconds,
        extra: [("listeners", .int(count)), ("writes", .int(writes)), ("writes_per_s", .int(Int(Double(writes) / seconds)))],
        check: check)
}
