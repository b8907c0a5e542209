import CanopyRemote
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// B13.remote.query.last10: `Database(url:)` observes `queryLimited(toLast: 10)` on a location of
/// 1M children held by `canopy serve` (a child process, in memory): the time from opening the
/// client to the query's first `.value`, and the bytes the server wrote to get it there (its
/// `wchar` in `/proc`, which with an in-memory store counts what it sent). Checked: the event
/// holds the last 10 keys.
let remoteQueryScenarios: [Scenario] = [
    Scenario(name: "B13.remote.query.last10.1M", stores: [.memory]) {
        try remoteQueryLast10("B13.remote.query.last10.1M", children: 1_000_000, $0)
    }
]

func remoteQueryLast10(_ name: String, children: Int, _ store: Store) throws -> BenchResult {
    let count = Bench.scaled(children)
    let server = try ServerChild(store)
    defer { server.stop() }
    let port = server.port
    var next = 0
    while next < count {
        let end = min(count, next + 100_000)
        let body =
            "{" + (next..<end).map { "\"\(paddedKey(UInt8(ascii: "k"), $0, digits: 7))\":{\"n\":\($0)}" }.joined(separator: ",") + "}"
        _ = try blocking { try await fetch(port: port, "/big.json?ns=bench&print=silent", method: "PATCH", body: body) }
        next = end
    }
    let written = server.bytesWritten
    let begin = monotonicNanos()
    let db = try Database(url: "http://127.0.0.1:\(port)?ns=bench")
    defer { db.close() }
    let first = Mutex<(at: UInt64, keys: [String])?>(nil)
    db.reference(withPath: "big").queryLimited(toLast: 10).observe(.value) { snapshot in
        let now = monotonicNanos()
        let keys = snapshot.children.compactMap { ($0 as? DataSnapshot)?.key }
        first.withLock { if $0 == nil { $0 = (now, keys) } }
    }
    let deadline = monotonicNanos() + 300_000_000_000
    while first.withLock({ $0 == nil }) {
        guard monotonicNanos() < deadline else { throw BenchError("no event within 300 s") }
        usleep(100)
    }
    let (at, keys) = first.withLock { $0! }
    let seconds = secondsBetween(begin, at)
    let bytes = server.bytesWritten - written
    let expected = (max(0, count - 10)..<count).map { paddedKey(UInt8(ascii: "k"), $0, digits: 7) }
    let check = keys == expected ? "ok" : "FAIL the first event held \(keys.count) keys: \(keys.prefix(3))…"
    return BenchResult(
        scenario: name, store: store, n: 1, seconds: seconds,
        extra: [
            ("children", .int(count)), ("first_value_ms", .double(seconds * 1000, 1)), ("server_bytes_written", .int(bytes)),
        ], check: check)
}

extension ServerProcess {
    /// The bytes the child has written (`wchar` in `/proc/PID/io`: files, pipes and sockets).
    var bytesWritten: Int {
        guard let text = try? String(contentsOfFile: "/proc/\(self.pid)/io", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("wchar:") }),
            let value = Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces))
        else { return -1 }
        return value
    }
}
