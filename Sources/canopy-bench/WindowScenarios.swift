import Canopy
import Foundation

/// B2a / B2b: a live `orderByChild("starCount").limitToLast(window)` over `posts` posts while
/// single-leaf `starCount` updates arrive; the window must follow exactly, with events only for
/// real window changes (counted by an independent sorted-array model).
struct WindowConfig {
    var posts = 100_000
    var window = 100
    var updates = 20_000
    /// Each update sets `starCount = max + 1` (every write enters the window).
    var hot = false
    /// Run the same updates with no query attached (the cost baseline).
    var withQuery = true
}

/// Counts events by type on the loop thread; read after a blocking read, which orders after them.
final class EventCounter: @unchecked Sendable {  // mutated only on the loop thread, read after a barrier
    var added = 0, removed = 0, changed = 0, moved = 0
    var total: Int { self.added + self.removed + self.changed + self.moved }
}

func windowScenario(_ name: String, _ config: WindowConfig, _ store: Store) throws -> BenchResult {
    let db = try Database.inMemory()
    defer { db.close() }
    let postsRef = db.reference(withPath: "posts")
    let count = Bench.scaled(config.posts)
    let updates = Bench.scaled(config.updates)
    var rng = BenchRNG(seed: 42)
    let (keys, firstStars) = StarWindowModel.posts(count, &rng)
    var stars = firstStars
    var initial: [String: JSONValue] = [:]
    for i in 0..<count { initial[keys[i]] = ["starCount": .int(Int64(stars[i])), "title": .string("post \(i)")] }
    try postsRef.queueSetValue(JSONValue.object(initial))
    initial = [:]
    _ = try blockingGetData(postsRef.child("p0000000"))

    var model = StarWindowModel(stars: stars, keys: keys, window: config.window)

    let counter = EventCounter()
    let query = postsRef.queryOrdered(byChild: "starCount").queryLimited(toLast: UInt(config.window))
    if config.withQuery {
        query.observe(.childAdded) { _ in counter.added += 1 }
        query.observe(.childRemoved) { _ in counter.removed += 1 }
        query.observe(.childChanged) { _ in counter.changed += 1 }
        query.observe(.childMoved) { _ in counter.moved += 1 }
        _ = try blockingGetData(postsRef.child("p0000000"))
    }
    let initialAdded = counter.added

    // The updates, and the events they must raise (computed before timing).
    var plan: [(index: Int, star: Int)] = []
    var maxStar = model.maxStar
    // Above 200k posts the per-update model (array inserts) is too slow to be worth it: only the
    // final window is checked there.
    let countEvents = count <= 200_000
    for _ in 0..<updates {
        let i = rng.next(below: count)
        let star: Int
        if config.hot {
            maxStar += 1
            star = maxStar
        } else {
            star = rng.next(below: 1_000_000)
        }
        plan.append((i, star))
        guard countEvents else {
            stars[i] = star
            continue
        }
        model.change(keys[i], from: stars[i], to: star)
        stars[i] = star
    }
    let expected = model.expected

    let start = monotonicNanos()
    for (i, star) in plan { try postsRef.child(keys[i]).child("starCount").queueSetValue(star) }
    let issued = secondsSince(start)
    let snapshot = try blockingGetData(query)
    let seconds = secondsSince(start)

    if !countEvents {
        model = StarWindowModel(stars: stars, keys: keys, window: config.window)
    }
    var check = "ok"
    let shown = snapshot.childSnapshots.map { $0.key ?? "" }
    let wanted = model.shown
    if shown != wanted { check = "FAIL window differs from brute force" }
    if config.withQuery && countEvents {
        let got = (counter.added - initialAdded, counter.removed, counter.changed, counter.moved)
        if got != (expected.added, expected.removed, expected.changed, expected.moved) {
            check = "FAIL events \(got) expected \(expected)"
        }
    }
    return BenchResult(
        scenario: name, store: store, n: updates, seconds: seconds,
        extra: [
            ("posts", .int(count)), ("window", .int(config.window)), ("query", .bool(config.withQuery)),
            ("issue_seconds", .double(issued, 4)),
            ("added", .int(counter.added - initialAdded)), ("removed", .int(counter.removed)),
            ("changed", .int(counter.changed)), ("moved", .int(counter.moved)),
            ("window_changes_expected", .int(expected.added + expected.removed + expected.changed + expected.moved)),
        ],
        check: check)
}

/// B7: one-shot range queries over `children` children ordered by `score`, with the index kept
/// alive (`keepSynced`), pipelined from one thread.
func rangeQueries(_ name: String, children: Int, k: Int, limitOnly: Bool, _ store: Store) throws -> BenchResult {
    let db = try Database.inMemory()
    defer { db.close() }
    let items = db.reference(withPath: "items")
    let count = Bench.scaled(children)
    var initial: [String: JSONValue] = [:]
    initial.reserveCapacity(count)
    for i in 0..<count { initial[paddedKey(UInt8(ascii: "i"), i, digits: 7)] = ["score": .int(Int64(i)), "name": "item"] }
    try items.queueSetValue(JSONValue.object(initial))
    initial = [:]
    let ordered = items.queryOrdered(byChild: "score")
    ordered.keepSynced(true)
    _ = try blockingGetData(items.child("i0000000"))

    let queries = Bench.scaled(k >= 1_000 ? 10_000 : 100_000)
    var rng = BenchRNG(seed: 7)
    let starts = (0..<queries).map { _ in rng.next(below: max(1, count - k)) }
    final class Tally: @unchecked Sendable {  // touched only on the loop thread, read after a barrier
        var done = 0
        var wrong = 0
    }
    let tally = Tally()
    let start = monotonicNanos()
    for s in starts {
        let query =
            limitOnly
            ? ordered.queryStarting(atValue: s).queryLimited(toFirst: UInt(k))
            : ordered.queryStarting(atValue: s).queryEnding(atValue: s + k - 1)
        query.getData { _, snapshot in
            tally.done += 1
            if snapshot?.childrenCount != UInt(k) { tally.wrong += 1 }
        }
    }
    _ = try blockingGetData(items.child("i0000000"))
    let seconds = secondsSince(start)
    let check = tally.done == queries && tally.wrong == 0 ? "ok" : "FAIL \(tally.wrong) of \(tally.done) results had the wrong size"
    return BenchResult(
        scenario: name, store: store, n: queries, seconds: seconds,
        extra: [("children", .int(count)), ("k", .int(k)), ("leaves_per_s", .int(Int(Double(queries * k) / seconds)))],
        check: check)
}
