import Foundation
import NIOCore
import NIOPosix

// B17: what the data browser (`/_/`) asks the server for when a node is opened or paged.

/// B17.browser.page: a node of `children` leaves (`k0000000`…), opened `pages` times at random
/// keys as the data browser opens a page: a live window `orderBy="$key"&limitToFirst=51&startAt=K`
/// over server-sent events, timed until its first event arrives (the page's content), one page
/// after the other on new connections. For comparison, `full_read_s` is one GET of the whole node
/// (what a browser without paging would load). Checked: every first event is a `put` at `/` of the
/// 51 keys from K, in order.
func browserPages(_ name: String, children: Int, pages: Int, _ store: Store) throws -> BenchResult {
    let count = Bench.scaled(children)
    let server = try ServerChild(store)
    defer { server.stop() }
    let port = server.port
    let body = "{" + (0..<count).map { "\"\(paddedKey(UInt8(ascii: "k"), $0, digits: 7))\":\($0)" }.joined(separator: ",") + "}"
    _ = try blocking { try await fetch(port: port, "/big.json?print=silent", method: "PUT", body: body) }
    var rng = BenchRNG(seed: 13)
    let starts = (0..<pages).map { _ in rng.next(below: count) }
    var events: [(start: Int, data: String)] = []
    let begin = monotonicNanos()
    for start in starts {
        let key = paddedKey(UInt8(ascii: "k"), start, digits: 7)
        let data = try blocking { try await firstEvent(port: port, "/big.json?orderBy=%22%24key%22&limitToFirst=51&startAt=%22\(key)%22") }
        events.append((start, data))
    }
    let seconds = Double(monotonicNanos() - begin) / 1e9
    let fullBegin = monotonicNanos()
    let full = try blocking { try await fetch(port: port, "/big.json") }
    let fullSeconds = Double(monotonicNanos() - fullBegin) / 1e9

    var check = "ok"
    for (start, data) in events {
        let expected = (start..<min(start + 51, count)).map { paddedKey(UInt8(ascii: "k"), $0, digits: 7) }
        guard let event = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any],
            event["path"] as? String == "/", let window = event["data"] as? [String: Any],
            window.keys.sorted() == expected, window[expected[0]] as? Int == start
        else {
            check = "FAIL the page from \(start): \(data.prefix(200))"
            break
        }
    }
    if check == "ok" && full.utf8.count != body.utf8.count {
        check = "FAIL the whole node read \(full.utf8.count) bytes, not \(body.utf8.count)"
    }
    return BenchResult(
        scenario: name, store: store, n: pages, seconds: seconds,
        extra: [
            ("children", .int(count)), ("page_ms", .double(seconds * 1000 / Double(pages), 2)), ("full_read_s", .double(fullSeconds, 3)),
            ("full_read_mb", .double(Double(full.utf8.count) / 1e6, 1)),
        ],
        check: check)
}

/// Opens the event stream `target` on a new connection and returns the `data:` of its first
/// event; then closes the connection.
func firstEvent(port: Int, _ target: String) async throws -> String {
    let request = "GET \(target) HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n"
    let received = try await exchange(port: port, request) { firstData($0) != nil }
    guard let data = firstData(received) else { throw BenchError("the stream \(target) ended before its first event") }
    return data
}

/// The `data:` line of the first complete event in a chunked response's bytes so far, or `nil`.
private func firstData(_ bytes: [UInt8]) -> String? {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let headerEnd = text.range(of: "\r\n\r\n") else { return nil }
    // De-chunk: `size\r\n` + payload + `\r\n`, until what arrived runs out.
    var payload = ""
    var rest = text[headerEnd.upperBound...]
    while let lineEnd = rest.range(of: "\r\n"), let size = Int(rest[..<lineEnd.lowerBound], radix: 16), size > 0 {
        let chunk = rest[lineEnd.upperBound...].utf8
        guard chunk.count >= size else { break }
        let end = chunk.index(chunk.startIndex, offsetBy: size)
        payload += String(Substring(chunk[..<end]))
        rest = Substring(chunk[end...]).dropFirst(2)
    }
    guard let event = payload.range(of: "\n\n"), let data = payload[..<event.lowerBound].range(of: "data: ") else { return nil }
    return String(payload[data.upperBound..<event.lowerBound])
}
