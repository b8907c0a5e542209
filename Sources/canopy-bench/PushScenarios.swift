import Canopy

// B1: "push" ingest of Firebase-style posts under /posts, with no listeners.
//   B1a.push.each   one `childByAutoId().setValue(post)` per post (fire-and-forget, one thread)
//   B1b.push.batch  all posts in one multi-path `updateChildValues` at /posts
// Each also as `….json`: the same posts given as `JSONValue` instead of `[String: Any]`, which
// skips the Foundation-value conversion (`JSONValue(any:)`) and so isolates its cost.

/// How the posts are handed to the API.
enum PostInput: Sendable {
    /// `[String: Any]` dictionaries, as a Firebase app writes them.
    case foundation
    /// `JSONValue` objects.
    case json

    var suffix: String { self == .json ? ".json" : "" }

    func value(_ post: PostGenerator.Post) -> Any { self == .json ? post.json : post.dictionary }
}

/// Firebase-style post content: a 12-byte title, a distinct 100-byte body (a template stamped with
/// the post's index, so the tree cannot share one string between posts), and a star count.
struct PostGenerator {
    private var rng: BenchRNG
    private let templates: [[UInt8]]

    init(seed: UInt64) {
        var rng = BenchRNG(seed: seed)
        let words = [
            "realtime", "tree", "json", "swift", "query", "window", "event", "child",
            "value", "sync", "journal", "server", "stream", "index", "order", "limit",
        ]
        self.templates = (0..<256).map { _ in
            var text: [UInt8] = []
            while text.count < 100 { text += Array((words[rng.next(below: words.count)] + " ").utf8) }
            return Array(text.prefix(100))
        }
        self.rng = rng
    }

    struct Post {
        var title: String
        var body: String
        var starCount: Int

        var dictionary: [String: Any] { ["title": self.title, "body": self.body, "starCount": self.starCount] }
        var json: JSONValue {
            .object(["title": .string(self.title), "body": .string(self.body), "starCount": .int(Int64(self.starCount))])
        }
    }

    mutating func post(_ index: Int) -> Post {
        let r = self.rng.next()
        let template = self.templates[Int(r >> 56)]
        let body = String(unsafeUninitializedCapacity: 100) { buffer in
            _ = buffer.initialize(fromContentsOf: template)
            var v = index
            for i in stride(from: 7, through: 0, by: -1) {  // "00012345" + template tail
                buffer[i] = UInt8(ascii: "0") &+ UInt8(v % 10)
                v /= 10
            }
            return 100
        }
        return Post(title: paddedKey(UInt8(ascii: "#"), Int(r % 100_000_000_000), digits: 11), body: body, starCount: Int((r >> 20) % 1000))
    }
}

/// Checks the posts location: the number of children and a sample of posts read back equal.
func verifyPosts(_ posts: DataSnapshot, count: Int, samples: [(key: String, post: PostGenerator.Post)]) -> String {
    guard posts.childrenCount == UInt(count) else { return "FAIL childrenCount \(posts.childrenCount) != \(count)" }
    for (key, post) in samples {
        let stored = posts.childSnapshot(forPath: key).json
        guard stored == post.json else { return "FAIL post \(key) reads back \(stored.jsonString())" }
    }
    return "ok"
}

/// B1a: N pushes, each its own `setValue`; timed until the last is applied (a final read).
func pushEach(_ store: Store, input: PostInput) throws -> BenchResult {
    var run = try PushRun()
    defer { run.db.close() }
    let n = run.count
    let posts = run.posts
    var latencies = [UInt64](repeating: 0, count: n)  // touched now, so it is in the baseline RSS

    let rssBefore = trimmedRSSBytes()
    log("B1a: \(n) setValue calls (\(input))")
    let t0 = monotonicNanos()
    try latencies.withUnsafeMutableBufferPointer { latency in
        for i in 0..<n {
            let post = run.generator.post(i)
            let ref = posts.childByAutoId()
            let value = input.value(post)
            let start = monotonicNanos()
            try ref.queueSetValue(value)
            latency[i] = monotonicNanos() &- start
            run.samples.note(i, key: ref.key!, post: post)
        }
    }
    let t1 = monotonicNanos()
    let snapshot = try blockingGetData(posts)
    let t2 = monotonicNanos()
    let rssAfter = trimmedRSSBytes()
    let check = run.check(snapshot)
    let summary = LatencySummary(sortingNanos: &latencies)
    let seconds = secondsBetween(t0, t2)
    return BenchResult(
        scenario: "B1a.push.each" + input.suffix, store: store, n: n, seconds: seconds,
        extra: [
            ("writes_per_s", .int(Int((Double(n) / seconds).rounded()))),
            ("issue_seconds", .double(secondsBetween(t0, t1), 4)),
            ("drain_seconds", .double(secondsBetween(t1, t2), 4)),
        ] + summary.fields + [
            ("leaves", .int(run.leaves))
        ] + run.memoryFields(before: rssBefore, after: rssAfter),
        check: check)
}

/// B1b: the same N posts in one `updateChildValues` at /posts (keys from `childByAutoId().key`).
/// `n` and `ops_per_s` count leaves (3 per post); timed from building the update to applied.
func pushBatch(_ store: Store, input: PostInput) throws -> BenchResult {
    var run = try PushRun()
    defer { run.db.close() }
    let n = run.count
    let posts = run.posts

    let rssBefore = trimmedRSSBytes()
    log("B1b: one updateChildValues of \(n) posts (\(input))")
    let t0 = monotonicNanos()
    let t1: UInt64
    do {
        var values: [AnyHashable: Any] = [:]
        values.reserveCapacity(n)
        for i in 0..<n {
            let post = run.generator.post(i)
            let key = posts.childByAutoId().key!
            values[key] = input.value(post)
            run.samples.note(i, key: key, post: post)
        }
        t1 = monotonicNanos()
        try posts.queueUpdateChildValues(values)
    }
    let t2 = monotonicNanos()
    let snapshot = try blockingGetData(posts)
    let t3 = monotonicNanos()
    let rssAfter = trimmedRSSBytes()
    let check = run.check(snapshot)
    let seconds = secondsBetween(t0, t3)
    return BenchResult(
        scenario: "B1b.push.batch" + input.suffix, store: store, n: run.leaves, seconds: seconds,
        extra: [
            ("posts", .int(n)), ("posts_per_s", .int(Int((Double(n) / seconds).rounded()))),
            ("build_seconds", .double(secondsBetween(t0, t1), 4)),
            ("call_seconds", .double(secondsBetween(t1, t2), 4)),
            ("apply_seconds", .double(secondsBetween(t2, t3), 4)),
            ("update_leaves_per_s", .int(Int((Double(run.leaves) / secondsBetween(t1, t3)).rounded()))),
        ] + run.memoryFields(before: rssBefore, after: rssAfter),
        check: check)
}

/// What B1a and B1b share: `count` posts (3 leaves each) from the same generator, written under
/// /posts of an in-memory database whose loop is warmed up, 16 of them read back at the end.
struct PushRun {
    let count = Bench.scaled(200_000)
    var leaves: Int { 3 * self.count }
    let db: Database
    let posts: DatabaseReference
    var generator = PostGenerator(seed: 1)
    var samples: PostSamples

    init() throws {
        self.db = try Database.inMemory()
        self.posts = self.db.reference(withPath: "posts")
        self.samples = PostSamples(below: self.count)
        do {
            try self.db.reference(withPath: "warmup").queueSetValue(0)
            _ = try blockingGetData(self.db.reference(withPath: "warmup"))
        } catch {
            self.db.close()
            throw error
        }
    }

    /// Checks the posts read back: their number and the samples.
    func check(_ snapshot: DataSnapshot) -> String { verifyPosts(snapshot, count: self.count, samples: self.samples.posts) }

    /// The resident memory before and after, and its growth per post and per leaf.
    func memoryFields(before: Int, after: Int) -> [(String, JSONField)] {
        let delta = after - before
        return [
            ("rss_before_mb", .double(megabytes(before), 1)), ("rss_after_mb", .double(megabytes(after), 1)),
            ("rss_delta_per_post_b", .double(Double(delta) / Double(self.count), 1)),
            ("rss_delta_per_leaf_b", .double(Double(delta) / Double(self.leaves), 1)),
        ]
    }
}
