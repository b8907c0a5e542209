import CanopyCore
import Foundation

/// Parses one deterministic Firebase-shaped document of about `targetBytes` bytes with
/// ``JSONParser`` (building ``JSONValue`` through `JSONValue(parsing:)`, which is specialized for
/// its builder inside CanopyCore) and with Foundation's `JSONSerialization`.
///
/// - Returns: the best of three wall-clock times in seconds for each parser, the document's
///   size in bytes, and whether both parsers found every post.
func jsonParseComparison(targetBytes: Int) -> (ours: Double, foundation: Double, bytes: Int, check: Bool) {
    let (document, postCount) = makeFirebaseLikeDocument(targetBytes: targetBytes)
    let data = Data(document)
    var ours = Double.infinity
    var foundation = Double.infinity
    var oursPosts = -1
    var foundationPosts = -1
    for _ in 0..<3 {
        do {
            let start = ContinuousClock.now
            let value = try JSONValue(parsing: document)
            ours = min(ours, seconds(since: start))
            oursPosts = value["posts"]?.objectValue?.count ?? -1
        } catch {
            oursPosts = -1
        }
        do {
            let start = ContinuousClock.now
            let value = try JSONSerialization.jsonObject(with: data)
            foundation = min(foundation, seconds(since: start))
            foundationPosts = ((value as? [String: Any])?["posts"] as? [String: Any])?.count ?? -1
        } catch {
            foundationPosts = -1
        }
    }
    return (ours, foundation, document.count, oursPosts == postCount && foundationPosts == postCount)
}

private func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = (ContinuousClock.now - start).components
    return Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
}

/// `{"posts": {"-N…": {"title", "body", "author", "starCount", "score", "createdAt", "tags",
/// "stars": {"uid…": true}}, …}, "meta": {…}}` with ASCII, accented, CJK and emoji text and
/// escapes; returns the UTF-8 bytes and the number of posts.
func makeFirebaseLikeDocument(targetBytes: Int) -> (bytes: [UInt8], posts: Int) {
    var random = BenchRNG(seed: 0x5EED_CA90_B1)
    let words = [
        "realtime", "database", "tree", "listener", "snapshot", "query", "café", "naïve", "日本語",
        "データ", "emoji 🎉", "quoted \"text\"", "back\\slash", "line\nbreak", "tab\tbed", "swift",
        "linux", "server", "offline", "sync", "priority", "child", "value", "order", "limit",
    ]
    func sentence(_ wordCount: Int) -> String {
        var parts: [String] = []
        for _ in 0..<wordCount { parts.append(words[Int(random.next() % UInt64(words.count))]) }
        return parts.joined(separator: " ")
    }
    func pushID() -> String {
        let alphabet = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8)
        var id: [UInt8] = Array("-N".utf8)
        for _ in 0..<18 { id.append(alphabet[Int(random.next() % 64)]) }
        return String(decoding: id, as: UTF8.self)
    }

    var out: [UInt8] = []
    out.reserveCapacity(targetBytes + 4096)
    out.append(contentsOf: #"{"posts":{"#.utf8)
    var posts = 0
    while out.count < targetBytes {
        if posts > 0 { out.append(UInt8(ascii: ",")) }
        posts += 1
        JSONWriter.appendString(pushID(), to: &out)
        out.append(contentsOf: #":{"title":"#.utf8)
        JSONWriter.appendString(sentence(4), to: &out)
        out.append(contentsOf: #","body":"#.utf8)
        JSONWriter.appendString(sentence(12), to: &out)
        out.append(contentsOf: #","author":"#.utf8)
        JSONWriter.appendString("uid\(random.next() % 100_000)", to: &out)
        out.append(contentsOf: #","starCount":"#.utf8)
        JSONWriter.appendInt(Int64(random.next() % 5000), to: &out)
        out.append(contentsOf: #","score":"#.utf8)
        JSONWriter.appendDouble(Double(random.next() % 1_000_000) / 1000, to: &out)
        out.append(contentsOf: #","createdAt":"#.utf8)
        JSONWriter.appendInt(1_700_000_000_000 + Int64(random.next() % 100_000_000), to: &out)
        out.append(contentsOf: #","tags":["#.utf8)
        for t in 0..<Int(random.next() % 3) {
            if t > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.appendString(words[Int(random.next() % UInt64(words.count))], to: &out)
        }
        out.append(contentsOf: #"],"stars":{"#.utf8)
        for s in 0..<Int(random.next() % 4) {
            if s > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.appendString("uid\(random.next() % 100_000)", to: &out)
            out.append(contentsOf: ":true".utf8)
        }
        out.append(contentsOf: "}}".utf8)
    }
    out.append(contentsOf: #"},"meta":{"version":3,"ratio":0.125,"note":null,"flags":[true,false]}}"#.utf8)
    return (out, posts)
}
