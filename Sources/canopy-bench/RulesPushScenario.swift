import Canopy
import CanopyCore
import CanopyRules

/// B12.push: B1a's workload (N pushes of `{author, title, body, starCount}` under /posts, one
/// loop job each), with or without the blog's rules; post `i` is written by
/// `BlogRules.users[i % 16]`. Timed until the last push is applied (a loop barrier); under the
/// journal also until the last completion (written to the OS, periodic sync).
func rulesPush(_ mode: RulesMode, _ store: Store) throws -> BenchResult {
    let name = "B12.push.\(mode.rawValue)"
    let n = Bench.scaled(200_000)
    let target = try RuledDatabase(store, mode)
    defer { target.close() }
    let postsRef = target.db.reference(withPath: "posts")
    var generator = PostGenerator(seed: 1)
    var keys: [String] = []
    keys.reserveCapacity(n)
    try target.load("warmup", .int(0))

    log("\(name): \(n) pushes, one loop job each")
    let t0 = monotonicNanos()
    for i in 0..<n {
        let post = generator.post(i)
        let key = postsRef.childByAutoId().key!
        let user = i % BlogRules.users.count
        var converter = try ValueConverter(function: "set", location: ["posts", key])
        let value = try converter.convert(
            .object([
                "author": .string(BlogRules.users[user]), "title": .string(post.title), "body": .string(post.body),
                "starCount": .int(Int64(post.starCount)),
            ]))
        target.write(.set(DatabasePath([ChildKey("posts"), ChildKey(key)]), value), as: BlogRules.authContexts[user])
        keys.append(key)
    }
    let t1 = monotonicNanos()
    let posts = target.node(at: DatabasePath([ChildKey("posts")]))
    let t2 = monotonicNanos()
    target.completions.wait(for: n)
    let t3 = monotonicNanos()

    var check = "ok"
    if let error = target.completions.firstError {
        check = "FAIL \(error)"
    } else if posts.childCount != n {
        check = "FAIL \(posts.childCount) posts, expected \(n)"
    } else if let i = keys.indices.first(where: {
        posts.child(ChildKey(keys[$0])).child(ChildKey("author")).leafValue != .string(BlogRules.users[$0 % BlogRules.users.count])
    }) {
        check = "FAIL post \(keys[i]) does not carry its author \(BlogRules.users[i % BlogRules.users.count])"
    }
    let seconds = secondsBetween(t0, t2)
    return BenchResult(
        scenario: name, store: store, n: n, seconds: seconds,
        extra: [
            ("rules", .bool(mode == .rules)), ("writes_per_s", .int(Int((Double(n) / seconds).rounded()))),
            ("issue_seconds", .double(secondsBetween(t0, t1), 4)), ("apply_seconds", .double(secondsBetween(t1, t2), 4)),
            ("completed_seconds", .double(secondsBetween(t0, t3), 4)), ("users", .int(BlogRules.users.count)),
        ],
        check: check)
}
