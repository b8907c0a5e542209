import CanopyCore
import CanopyServer
import Foundation
import Synchronization
import Testing

/// The SDKs' long-polling transport (`/.lp`), driven request by request by a client of our own
/// written from the JS SDK's `BrowserPollConnection` (``LongPollClient``), against a live server
/// on loopback.
@Suite("Long polling")
struct LongPollTests {
    static func server(_ configure: (inout ServerConfiguration) -> Void = { _ in }) -> CanopyServer {
        makeServer { configuration in
            // Polls held 10 s at most: every request here has an answer coming well before.
            configuration.longPollTimeout = .seconds(30)
            configure(&configuration)
        }
    }

    /// A data push: its action, path (without its slashes) and data.
    struct Push: Equatable {
        var action: String
        var path: String
        var data: JSONValue
    }

    static func push(_ message: JSONValue) -> Push? {
        guard message["t"] == .string("d"), let action = message["d"]?["a"]?.stringValue, let body = message["d"]?["b"],
            let path = body["p"]?.stringValue, let data = body["d"]
        else { return nil }
        return Push(action: action, path: path.trimmingCharacters(in: CharacterSet(charactersIn: "/")), data: data)
    }

    static func push(_ action: String, _ path: String, _ data: String) throws -> Push? {
        Push(action: action, path: path, data: try json(data))
    }

    static func request(_ r: Int, _ action: String, _ body: String) -> String {
        #"{"t":"d","d":{"r":\#(r),"a":"\#(action)","b":\#(body)}}"#
    }

    /// The value at `path` read over REST.
    static func read(port: Int, _ path: String, namespace: String) async throws -> JSONValue {
        let (status, body) = try await LongPollClient.get(port: port, "\(path).json?ns=\(namespace)")
        guard status == 200 else { throw TestFailure("GET \(path) answered \(status): \(body)") }
        return try json(body)
    }

    static func write(port: Int, _ path: String, _ value: String, namespace: String) async throws {
        let connection = try await RawConnection.connect(port: port)
        try await connection.send("PUT", "\(path).json?ns=\(namespace)", headers: [("Connection", "close")], body: value)
        let (head, body) = try await connection.readResponse()
        await connection.close()
        guard head.status == 200 else { throw TestFailure("PUT \(path) answered \(head.status): \(body)") }
    }

    @Test("start: the script hands over the session and the hello names the host the client used")
    func startAndHello() async throws {
        try await withLiveServer(Self.server()) { port in
            let client = try await LongPollClient.start(port: port, namespace: "lp-hello", host: "db.example.test:4321")
            let hello = try #require(client.hello, "the first batch is the hello: \(client.first)")
            #expect(hello["h"] == .string("db.example.test:4321"))
            #expect(hello["v"] == .string("5"))
            #expect(hello["ts"]?.int64Value != nil)
            #expect(hello["s"]?.stringValue?.isEmpty == false)
            #expect(client.id != client.password)
            // A ping is answered with a pong, in the next batch.
            #expect(
                try await client.send(#"{"t":"c","d":{"t":"p","d":{}}}"#)
                    == .messages(number: 1, [try json(#"{"t":"c","d":{"t":"o","d":{}}}"#)]))
        }
    }

    @Test("listen, data push, put and merge answered ok, as on a WebSocket")
    func listenAndWrites() async throws {
        try await withLiveServer(Self.server()) { port in
            let ns = "lp-data"
            try await Self.write(port: port, "/a", #"{"x":1}"#, namespace: ns)
            let client = try await LongPollClient.start(port: port, namespace: ns)
            try await client.send(Self.request(1, "q", #"{"p":"/a","h":""}"#))
            let (ok, before) = try await client.answer(to: 1)
            #expect(ok["d"]?["b"]?["s"] == .string("ok"))
            #expect(before.map(Self.push) == [try Self.push("d", "a", #"{"x":1}"#)])

            try await client.send(Self.request(2, "p", #"{"p":"/a/y","d":"two"}"#))
            let put = try await client.answer(to: 2)
            #expect(put.answer["d"]?["b"]?["s"] == .string("ok"))
            #expect(put.before.map(Self.push) == [try Self.push("d", "a/y", #""two""#)])

            try await client.send(Self.request(3, "m", #"{"p":"/a","d":{"x":null,"z":3}}"#))
            let merge = try await client.answer(to: 3)
            #expect(merge.answer["d"]?["b"]?["s"] == .string("ok"))
            #expect(merge.before.map(Self.push) == [try Self.push("m", "a", #"{"x":null,"z":3}"#)], "\(merge.before)")
            #expect(try await Self.read(port: port, "/a", namespace: ns) == json(#"{"y":"two","z":3}"#))

            // A write by someone else is pushed to the held poll.
            try await Self.write(port: port, "/a/y", "\"three\"", namespace: ns)
            #expect(Self.push(try await client.next()) == (try Self.push("d", "a/y", #""three""#)))
        }
    }

    @Test("auth and rules: an anonymous write is refused, the same after auth is allowed")
    func authAndRules() async throws {
        let server = Self.server { configuration in
            configuration.authToken = "s3cret"
            configuration.rules =
                #"{"rules": {"open": {".read": true, ".write": true}, "private": {".read": "auth != null", ".write": "auth != null"}}}"#
        }
        try await withLiveServer(server) { port in
            let client = try await LongPollClient.start(port: port, namespace: "lp-rules")
            try await client.send(Self.request(1, "p", #"{"p":"/private/x","d":1}"#))
            let refused = try await client.answer(to: 1).answer
            #expect(refused["d"]?["b"]?["s"] == .string("permission_denied"))
            try await client.send(Self.request(2, "q", #"{"p":"/private","h":""}"#))
            #expect(try await client.answer(to: 2).answer["d"]?["b"]?["s"] == .string("permission_denied"))

            try await client.send(Self.request(3, "auth", #"{"cred":"s3cret"}"#))
            #expect(try await client.answer(to: 3).answer["d"]?["b"]?["s"] == .string("ok"))
            try await client.send(Self.request(4, "p", #"{"p":"/private/x","d":1}"#))
            #expect(try await client.answer(to: 4).answer["d"]?["b"]?["s"] == .string("ok"))
        }
    }

    @Test("segments: a message cut in many, over several requests and out of order, is put back together")
    func segmentedMessages() async throws {
        try await withLiveServer(Self.server()) { port in
            let ns = "lp-segments"
            let client = try await LongPollClient.start(port: port, namespace: ns)
            // 20,000 characters: eleven segments of 1,840 base64 characters or fewer.
            let long = String(repeating: "é0123456789", count: 2000)
            let short = client.segments(of: Self.request(1, "p", #"{"p":"/short","d":1}"#))
            let put = client.segments(of: Self.request(2, "p", #"{"p":"/long","d":"\#(long)"}"#))
            #expect(short.map(\.0) == [0] && put.count > 10 && put.first?.0 == 1)
            // The SDK may have two requests in flight, taken in any order: the first request here
            // carries a whole message and the last segments of the next, the second its first
            // segments. Only the first message is complete after the first request.
            _ = try await client.request(segments: short + put[5...])
            let first = try await client.answer(to: 1)
            #expect(first.answer["d"]?["b"]?["s"] == .string("ok") && first.before.isEmpty)
            #expect(try await Self.read(port: port, "/long", namespace: ns) == .null)
            _ = try await client.request(segments: Array(put[..<5]))
            #expect(try await client.answer(to: 2).answer["d"]?["b"]?["s"] == .string("ok"))
            #expect(try await Self.read(port: port, "/long", namespace: ns) == .string(long))
            // A segment sent again (a repeated request) is ignored.
            _ = try await client.request(segments: [put[3]] + client.segments(of: Self.request(3, "p", #"{"p":"/again","d":3}"#)))
            #expect(try await client.answer(to: 3).answer["d"]?["b"]?["s"] == .string("ok"))

            // Two messages in one request; the next segment numbers follow on.
            let two =
                client.segments(of: Self.request(4, "p", #"{"p":"/b","d":2}"#))
                + client.segments(of: Self.request(5, "p", #"{"p":"/c","d":3}"#))
            #expect(two.map(\.0) == [put.count + 2, put.count + 3])
            _ = try await client.request(segments: two)
            #expect(try await client.answer(to: 5).answer["d"]?["b"]?["s"] == .string("ok"))
            #expect(try await Self.read(port: port, "/b", namespace: ns) == .int(2))
        }
    }

    @Test("a message longer than a batch goes whole, alone, and what follows it comes in the next batch")
    func largeServerMessage() async throws {
        try await withLiveServer(Self.server()) { port in
            let ns = "lp-large"
            let big = String(repeating: "0123456789abcdef", count: 20_000)  // 320,000 characters
            try await Self.write(port: port, "/big", "\"\(big)\"", namespace: ns)
            let client = try await LongPollClient.start(port: port, namespace: ns)
            let reply = try await client.send(Self.request(1, "q", #"{"p":"/big","h":""}"#))
            guard case .messages(1, let messages) = reply else { throw TestFailure("no batch 1: \(reply)") }
            #expect(messages.map(Self.push) == [try Self.push("d", "big", "\"\(big)\"")])
            // The answer did not fit in the same batch: it comes in the next one.
            let ok = try await client.answer(to: 1)
            #expect(ok.before.count == 1 && ok.answer["d"]?["b"]?["s"] == .string("ok"))
        }
    }

    @Test("the disconnect frame: its page names the disconn request, which ends the session and runs its onDisconnect")
    func disconnectFrame() async throws {
        try await withLiveServer(Self.server()) { port in
            let ns = "lp-dframe"
            let client = try await LongPollClient.start(port: port, namespace: ns)
            try await client.send(Self.request(1, "o", #"{"p":"/gone","d":"bye"}"#))
            #expect(try await client.answer(to: 1).answer["d"]?["b"]?["s"] == .string("ok"))
            #expect(try await Self.read(port: port, "/gone", namespace: ns) == .null)

            let (status, page) = try await LongPollClient.get(port: port, "/.lp?dframe=t&id=\(client.id)&pw=\(client.password)&ns=\(ns)")
            #expect(status == 200)
            let target = "/.lp?disconn=t&id=\(client.id)&pw=\(client.password)"
            #expect(page.contains(target) && page.contains("sendBeacon"))

            let stream = try await EventStreamClient.open(port: port, "/gone.json?ns=\(ns)")
            #expect(try await stream.nextData()?.payload().data == .null)
            let (left, _) = try await LongPollClient.get(port: port, target)
            #expect(left == 204)
            let event = try await within(30, "the onDisconnect write") { try await stream.nextData() }
            #expect(try event?.payload().data == .string("bye"))
            #expect(
                try await client.request()
                    == .failed(status: 404, body: #"{"error":"No long-poll session \"\#(client.id)\": it ended; start a new one."}"#))
        }
    }

    @Test("a session that stops polling times out and runs its onDisconnect; one that polls stays")
    func idleTimeout() async throws {
        let server = Self.server { $0.longPollTimeout = .seconds(10) }  // polls held 3.3 s
        try await withLiveServer(server) { port in
            let ns = "lp-idle"
            let stays = try await LongPollClient.start(port: port, namespace: ns)
            let leaves = try await LongPollClient.start(port: port, namespace: ns)
            try await leaves.send(Self.request(1, "o", #"{"p":"/gone","d":true}"#))
            #expect(try await leaves.answer(to: 1).answer["d"]?["b"]?["s"] == .string("ok"))
            let stream = try await EventStreamClient.open(port: port, "/gone.json?ns=\(ns)")
            #expect(try await stream.nextData()?.payload().data == .null)

            // `stays` polls meanwhile (each poll held, then answered empty), through a whole timeout.
            let stop = Atomic<Bool>(false)
            // A structured child keeps the test client's threads; an unstructured task would run on
            // the shared pool, which the other tests of a whole run may hold past the timeout.
            async let polling: LongPollClient.Reply = {
                while true {
                    let reply = try await stays.request()
                    if reply != .nothing || stop.load(ordering: .relaxed) { return reply }
                }
            }()
            let event = try await within(60, "the onDisconnect write of the session that left") { try await stream.nextData() }
            #expect(try event?.payload().data == .bool(true))
            stop.store(true, ordering: .relaxed)
            #expect(try await polling == .nothing)
            #expect(
                try await leaves.request()
                    == .failed(status: 404, body: #"{"error":"No long-poll session \"\#(leaves.id)\": it ended; start a new one."}"#))
            try await stays.send(Self.request(1, "p", #"{"p":"/still","d":1}"#))
            #expect(try await stays.answer(to: 1).answer["d"]?["b"]?["s"] == .string("ok"))
        }
    }

    @Test("bad input: a clear error, never a crash, and the session goes on; a malformed message ends it")
    func badInput() async throws {
        try await withLiveServer(Self.server()) { port in
            let ns = "lp-bad"
            #expect(try await LongPollClient.get(port: port, "/.lp").0 == 400)
            #expect(try await LongPollClient.get(port: port, "/.lp?start=t&cb=alert(1)&v=5").0 == 400)
            #expect(try await LongPollClient.get(port: port, "/.lp?id=nope&pw=nope").0 == 404)
            #expect(try await LongPollClient.get(port: port, "/.lp?id=a%22b&pw=x").0 == 400)

            // An invalid namespace: the start carries a shutdown, as a WebSocket's would.
            let refused = try await LongPollClient.start(port: port, namespace: "not.valid")
            #expect(refused.first.first?["d"]?["t"] == .string("s"))

            let client = try await LongPollClient.start(port: port, namespace: ns)
            #expect(
                try await client.request(password: "wrong")
                    == .failed(status: 403, body: #"{"error":"Wrong password for long-poll session \"\#(client.id)\"."}"#))
            guard case .failed(400, _) = try await client.request(extra: "&seg0=0&ts0=1") else {
                throw TestFailure("a segment without d0 accepted")
            }
            guard case .failed(400, _) = try await client.request(extra: "&seg0=0&ts0=1&d0=%3Cscript%3E") else {
                throw TestFailure("non-base64 accepted")
            }
            guard case .failed(400, _) = try await client.request(extra: "&seg0=x&ts0=1&d0=e30") else {
                throw TestFailure("seg0=x accepted")
            }
            // None of that was taken: the session goes on, its segments numbered from 0.
            try await client.send(Self.request(1, "p", #"{"p":"/fine","d":1}"#))
            #expect(try await client.answer(to: 1).answer["d"]?["b"]?["s"] == .string("ok"))

            // A message that is not the protocol's ends the connection: the client is told to close.
            #expect(try await client.send(#"{"t":"x"}"#) == .closed(last: 1))
            guard case .failed(404, _) = try await client.request() else { throw TestFailure("the session outlived a malformed message") }
        }
    }
}
