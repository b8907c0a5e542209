import Canopy
import CanopyCore
import CanopyRules

/// B12.window: B2a's workload with or without the blog's rules. 100,000 posts
/// `{author, title, starCount}` are loaded, a live `orderByChild("starCount").limitToLast(100)`
/// is observed (as in B2a), then 20,000 single-leaf `posts/<id>/starCount` sets on random posts
/// to random values, each by the post's author in one loop job. Timed until the last set is
/// applied and the window read; the window and its events are checked against a sorted model.
func rulesWindow(_ mode: RulesMode, _ store: Store) throws -> BenchResult {
    let name = "B12.window.\(mode.rawValue)"
    let window = 100
    let count = Bench.scaled(100_000)
    let updates = Bench.scaled(20_000)
    let target = try RuledDatabase(store, mode)
    defer { target.close() }
    let postsRef = target.db.reference(withPath: "posts")
    var rng = BenchRNG(seed: 42)
    let (keys, firstStars) = StarWindowModel.posts(count, &rng)
    var stars = firstStars
    var initial: [String: JSONValue] = [:]
    for i in 0..<count {
        initial[keys[i]] = [
            "author": .string(BlogRules.users[i % BlogRules.users.count]), "title": .string("post \(i)"),
            "starCount": .int(Int64(stars[i])),
        ]
    }
    try target.load("posts", .object(initial))
    initial = [:]

    var model = StarWindowModel(stars: stars, keys: keys, window: window)

    let counter = EventCounter()
    let query = postsRef.queryOrdered(byChild: "starCount").queryLimited(toLast: UInt(window))
    query.observe(.childAdded) { _ in counter.added += 1 }
    query.observe(.childRemoved) { _ in counter.removed += 1 }
    query.observe(.childChanged) { _ in counter.changed += 1 }
    query.observe(.childMoved) { _ in counter.moved += 1 }
    _ = try blockingGetData(postsRef.child(keys[0]))
    let initialAdded = counter.added

    // The sets, and the events they must raise (computed before timing).
    var plan: [(index: Int, star: Int)] = []
    for _ in 0..<updates {
        let i = rng.next(below: count)
        let star = rng.next(below: 1_000_000)
        plan.append((i, star))
        model.change(keys[i], from: stars[i], to: star)
        stars[i] = star
    }
    let expected = model.expected

    log("\(name): \(updates) starCount sets over \(count) posts, window \(window)")
    let start = monotonicNanos()
    for (i, star) in plan {
        let path = DatabasePath([ChildKey("posts"), ChildKey(keys[i]), ChildKey("starCount")])
        target.write(.set(path, WriteValue(node: .leaf(.int(Int64(star))))), as: BlogRules.authContexts[i % BlogRules.users.count])
    }
    let issued = secondsSince(start)
    let snapshot = try blockingGetData(query)
    let seconds = secondsSince(start)
    target.completions.wait(for: updates)
    let completed = secondsSince(start)

    var check = "ok"
    let got = (counter.added - initialAdded, counter.removed, counter.changed, counter.moved)
    if let error = target.completions.firstError {
        check = "FAIL \(error)"
    } else if snapshot.childSnapshots.map({ $0.key ?? "" }) != model.shown {
        check = "FAIL window differs from brute force"
    } else if got != (expected.added, expected.removed, expected.changed, expected.moved) {
        check = "FAIL events \(got) expected \(expected)"
    }
    return BenchResult(
        scenario: name, store: store, n: updates, seconds: seconds,
        extra: [
            ("rules", .bool(mode == .rules)), ("updates_per_s", .int(Int((Double(updates) / seconds).rounded()))),
            ("posts", .int(count)), ("window", .int(window)), ("issue_seconds", .double(issued, 4)),
            ("completed_seconds", .double(completed, 4)),
            ("window_changes", .int(got.0 + got.1 + got.2 + got.3)),
        ],
        check: check)
}
