import CanopyConnection
import CanopyTestSupport
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

/// The package's HTTP/1.1 client (the command line's REST and event streams, a node's forwarded
/// writes) against a real `CanopyServer`.
@Suite("HTTP client")
struct HTTPClientTests {
    @Test("pipelined requests on one kept-alive connection are each answered with their own response")
    func pipelined() async throws {
        try await withServer { port in
            let client = HTTPClient(userAgent: "canopy-tests")
            defer { client.close() }
            let count = 40
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<count {
                    group.addTask {
                        let response = try await client.send(
                            .PUT, host: "127.0.0.1", port: port, "/items/\(i).json", body: Array("\(i * 7)".utf8))
                        #expect(response.status == 200)
                        #expect(String(decoding: response.body, as: UTF8.self) == "\(i * 7)")
                    }
                }
                try await group.waitForAll()
            }
            // Reads sent at once, each answered with its own item.
            try await withThrowingTaskGroup(of: (Int, HTTPClient.Response).self) { group in
                for i in 0..<count {
                    group.addTask { (i, try await client.send(.GET, host: "127.0.0.1", port: port, "/items/\(i).json")) }
                }
                var answered = 0
                for try await (i, response) in group {
                    #expect(response.status == 200 && String(decoding: response.body, as: UTF8.self) == "\(i * 7)", "item \(i)")
                    answered += 1
                }
                #expect(answered == count)
            }
            // An error status is a response, not a failure.
            let refused = try await client.send(.GET, host: "127.0.0.1", port: port, "/items.json?orderBy=nope")
            #expect(refused.status == 400)
            #expect(String(decoding: refused.body, as: UTF8.self).contains("\"error\""))
        }
    }

    @Test("a refused connection fails before anything is sent")
    func refused() async throws {
        let client = HTTPClient(userAgent: "canopy-tests")
        defer { client.close() }
        do {
            _ = try await client.send(.GET, host: "127.0.0.1", port: 1, "/.json")
            Issue.record("a request to port 1 was answered")
        } catch {
            #expect(!error.sent)
            #expect(error.reason == "connection refused")
        }
    }

    @Test("a server that never answers fails the request after its timeout, effect unknown; the next request connects again")
    func timeout() async throws {
        // Accepts connections and reads requests, answers nothing.
        let silent = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        defer { silent.close(promise: nil) }
        let port = try #require(silent.localAddress?.port)
        let client = HTTPClient(userAgent: "canopy-tests")
        defer { client.close() }
        for _ in 0..<2 {
            do {
                _ = try await client.send(.POST, host: "127.0.0.1", port: port, "/x", body: [1, 2, 3], timeout: .milliseconds(200))
                Issue.record("a silent server answered")
            } catch {
                #expect(error.sent)
                #expect(error.reason.hasPrefix("no answer within"), "\(error.reason)")
            }
        }
    }

    @Test("an event stream's events arrive named, with their data; an error thrown by the handler ends it unchanged")
    func eventStream() async throws {
        struct Enough: Error {}
        try await withServer { port in
            let client = HTTPClient(userAgent: "canopy-tests")
            defer { client.close() }
            _ = try await client.send(.PUT, host: "127.0.0.1", port: port, "/feed.json", body: Array(#"{"a":1}"#.utf8))
            let seen = Locked<[(String, String)]>([])
            do {
                _ = try await client.stream(host: "127.0.0.1", port: port, "/feed.json") { name, data in
                    seen.withLock { $0.append((name, String(decoding: data, as: UTF8.self))) }
                    throw Enough()
                }
                Issue.record("the stream ended without an event")
            } catch is Enough {}
            let events = seen.withLock { $0 }
            #expect(events.count == 1)
            #expect(events.first?.0 == "put")
            #expect(events.first?.1 == #"{"path":"/","data":{"a":1}}"#)

            // A stream the server refuses returns its status and body.
            let refused = try await client.stream(host: "127.0.0.1", port: port, "/feed.json?orderBy=nope") { _, _ in
                Issue.record("a refused stream had an event")
            }
            #expect(refused.status == 400)
            #expect(String(decoding: refused.body, as: UTF8.self).contains("\"error\""))
        }
    }

    @Test("the event-stream parser: names, multi-line data, comments, CRLF, any split")
    func parser() {
        let text = ": keep-alive\r\nevent: put\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\ndata: plain\n\nevent: keep-alive\ndata: null\n\n"
        let bytes = Array(text.utf8)
        let expected: [(String, String)] = [("put", "{\"a\":\n1}"), ("message", "plain"), ("keep-alive", "null")]
        for split in [1, 2, 5, bytes.count] {
            var parser = EventStreamParser()
            var events: [(String, String)] = []
            for start in stride(from: 0, to: bytes.count, by: split) {
                for (name, data) in parser.feed(bytes[start..<min(start + split, bytes.count)]) {
                    events.append((name, String(decoding: data, as: UTF8.self)))
                }
            }
            #expect(events.map(\.0) == expected.map(\.0), "split \(split)")
            #expect(events.map(\.1) == expected.map(\.1), "split \(split)")
        }
    }
}
