import Canopy
import CanopyCore
import CanopyServer
import CanopyTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// Server-sent events over a real loopback socket.
@Suite("Streaming")
struct StreamTests {
    /// Sends one request on its own connection and returns the status and body.
    @discardableResult
    static func request(_ port: Int, _ method: String, _ target: String, _ body: String? = nil, headers: [(String, String)] = [])
        async throws -> (status: Int, body: String)
    {
        let connection = try await RawConnection.connect(port: port)
        defer { Task { await connection.close() } }
        try await connection.send(method, target, headers: headers, body: body)
        let response = try await connection.readResponse()
        return (response.head.status, response.body)
    }

    static func expectEvent(
        _ stream: EventStreamClient, _ name: String, _ path: String, _ data: JSONValue, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        guard let event = try await within(10, "\(name) \(path)", { try await stream.nextData() }) else {
            Issue.record("stream ended; expected \(name) \(path)", sourceLocation: sourceLocation)
            return
        }
        #expect(event.name == name, "\(event)", sourceLocation: sourceLocation)
        let payload = try event.payload()
        #expect(payload.path == path, "\(event)", sourceLocation: sourceLocation)
        #expect(payload.data == data, "\(event)", sourceLocation: sourceLocation)
    }

    @Test("headers, initial put, then put/patch for writes at, below and above the location, in commit order")
    func events() async throws {
        try await withLiveServer(makeServer()) { port in
            try await Self.request(port, "PUT", "/rooms/r1.json", #"{"name": "One", "members": {"ada": true}}"#)
            let stream = try await EventStreamClient.open(port: port, "/rooms/r1.json")
            #expect(stream.head.status == 200)
            #expect(stream.head.header("content-type") == "text/event-stream; charset=utf-8")
            try await Self.expectEvent(stream, "put", "/", ["name": "One", "members": ["ada": true]])

            // At the location.
            try await Self.request(port, "PUT", "/rooms/r1.json", #"{"name": "Uno"}"#)
            try await Self.expectEvent(stream, "put", "/", ["name": "Uno"])
            // Below it: put, patch (keys as written), delete.
            try await Self.request(port, "PUT", "/rooms/r1/members/bob.json", "true")
            try await Self.expectEvent(stream, "put", "/members/bob", true)
            try await Self.request(port, "PATCH", "/rooms/r1.json", #"{"topic": "chat", "members/cy": true}"#)
            try await Self.expectEvent(stream, "patch", "/", ["members/cy": true, "topic": "chat"])
            try await Self.request(port, "DELETE", "/rooms/r1/members/bob.json")
            try await Self.expectEvent(stream, "put", "/members/bob", .null)
            let pushed = try await Self.request(port, "POST", "/rooms/r1/log.json", #""hello""#)
            guard case .object(let o) = try json(pushed.body), case .string(let name)? = o["name"] else { throw TestFailure("no push id") }
            try await Self.expectEvent(stream, "put", "/log/\(name)", "hello")
            // Server values arrive resolved.
            try await Self.request(port, "PUT", "/rooms/r1/count.json", #"{".sv": {"increment": 2}}"#)
            try await Self.expectEvent(stream, "put", "/count", 2)

            // Above it: a set of the parent, a multi-path update touching it, one into it,
            // and writes elsewhere (no event).
            try await Self.request(port, "PUT", "/rooms/r2.json", #"{"name": "Two"}"#)
            try await Self.request(port, "PATCH", "/.json", #"{"rooms/r1/name": "Eins", "rooms/r2/name": "Zwei", "other": 1}"#)
            try await Self.expectEvent(stream, "put", "/name", "Eins")
            try await Self.request(port, "PATCH", "/rooms.json", #"{"r1/a": 1, "r1/b/c": 2, "r3": 3}"#)
            try await Self.expectEvent(stream, "patch", "/", ["a": 1, "b/c": 2])
            try await Self.request(port, "PATCH", "/.json", #"{"rooms/r1": {"fresh": true}}"#)
            try await Self.expectEvent(stream, "put", "/", ["fresh": true])
            try await Self.request(port, "PUT", "/rooms.json", #"{"r1": {"name": "Last"}}"#)
            try await Self.expectEvent(stream, "put", "/", ["name": "Last"])
            try await Self.request(port, "DELETE", "/.json")
            try await Self.expectEvent(stream, "put", "/", .null)
            await stream.connection.close()
        }
    }

    @Test("a client that applies the events to the initial value ends with what GET returns")
    func eventsReplayToTheSameValue() async throws {
        try await withLiveServer(makeServer()) { port in
            let stream = try await EventStreamClient.open(port: port, "/s.json")
            var value: JSONValue = .null
            var applied = 0
            let writes: [(String, String, String?)] = [
                ("PUT", "/s.json", #"{"a": {"x": 1}, "b": 2}"#),
                ("PATCH", "/s.json", #"{"a/y": 3, "c": [1, 2]}"#),
                ("PUT", "/s/a/x.json", "10"),
                ("PATCH", "/.json", #"{"s/b": null, "s/d": {"e": "f"}}"#),
                ("DELETE", "/s/c.json", nil),
                ("POST", "/s/list.json", "1"),
                ("PATCH", "/s/a.json", #"{"x": null, "y": null}"#),
            ]
            for (method, target, text) in writes { try await Self.request(port, method, target, text) }
            let expected = try json(try await Self.request(port, "GET", "/s.json").body)
            while applied < writes.count + 1 {
                guard let event = try await within(10, "events", { try await stream.nextData() }) else { throw TestFailure("stream ended") }
                let payload = try event.payload()
                let path = payload.path.split(separator: "/").map(String.init)
                if event.name == "put" {
                    value = Self.setting(value, path, payload.data)
                } else {
                    guard case .object(let members) = payload.data else { throw TestFailure("patch data: \(payload.data)") }
                    for (key, member) in members { value = Self.setting(value, path + key.split(separator: "/").map(String.init), member) }
                }
                applied += 1
            }
            #expect(Self.normalized(value) == Self.normalized(expected))
            await stream.connection.close()
        }
    }

    static func setting(_ value: JSONValue, _ path: [String], _ new: JSONValue) -> JSONValue {
        guard let first = path.first else { return new }
        var object: [String: JSONValue] = [:]
        if case .object(let o) = value { object = o }
        if case .array(let a) = value { for (i, v) in a.enumerated() { object[String(i)] = v } }
        let child = setting(object[first] ?? .null, Array(path.dropFirst()), new)
        object[first] = child.isNull ? nil : child
        return object.isEmpty ? .null : .object(object)
    }

    /// Arrays as objects with index keys, nulls dropped.
    static func normalized(_ value: JSONValue) -> JSONValue {
        switch value {
        case .array(let a):
            var o: [String: JSONValue] = [:]
            for (i, v) in a.enumerated() where !v.isNull { o[String(i)] = normalized(v) }
            return .object(o)
        case .object(let o): return .object(o.compactMapValues { $0.isNull ? nil : normalized($0) })
        default: return value
        }
    }

    @Test("a query stream gets its window and changes to it")
    func queryStream() async throws {
        try await withLiveServer(makeServer()) { port in
            try await Self.request(port, "PUT", "/scores.json", #"{"a": 1, "b": 5, "c": 3}"#)
            let stream = try await EventStreamClient.open(port: port, "/scores.json?orderBy=%22$value%22&limitToLast=2")
            try await Self.expectEvent(stream, "put", "/", ["b": 5, "c": 3])
            try await Self.request(port, "PUT", "/scores/d.json", "4")
            try await Self.expectEvent(stream, "patch", "/", ["c": .null, "d": 4])
            try await Self.request(port, "PUT", "/scores/a.json", "0")  // outside the window: no event
            try await Self.request(port, "PUT", "/scores/b.json", "6")
            try await Self.expectEvent(stream, "patch", "/", ["b": 6])
            await stream.connection.close()
        }
    }

    @Test("bad stream requests are answered with an HTTP error, not a stream")
    func badStreams() async throws {
        try await withLiveServer(makeServer()) { port in
            let stream = try await EventStreamClient.open(port: port, "/x.json?orderBy=bad")
            #expect(stream.head.status == 400)
            let shallow = try await EventStreamClient.open(port: port, "/x.json?shallow=true")
            #expect(shallow.head.status == 400)
        }
    }

    @Test("keep-alive events at the configured interval")
    func keepAlive() async throws {
        try await withLiveServer(makeServer { $0.keepAliveInterval = .milliseconds(100) }) { port in
            let stream = try await EventStreamClient.open(port: port, "/k.json")
            #expect(try await stream.next()?.name == "put")
            let event = try await within(5, "keep-alive") { try await stream.next() }
            #expect(event == EventStreamClient.Event(name: "keep-alive", data: "null"))
            await stream.connection.close()
        }
    }

    @Test("closing the namespace's database ends its streams with a cancel event")
    func cancel() async throws {
        let server = makeServer()
        try await withLiveServer(server) { port in
            let stream = try await EventStreamClient.open(port: port, "/c.json?ns=gone")
            #expect(try await stream.next()?.name == "put")
            await server.store.close()
            let event = try await within(5, "cancel") { try await stream.nextData() }
            #expect(event?.name == "cancel")
            #expect(try event.map { try json($0.data) } == "The database was closed.")
            #expect(try await within(5, "end") { try await stream.next() } == nil)
            // Nothing is served after the store closed.
            #expect(try await Self.request(port, "GET", "/c.json?ns=other").status == 503)
        }
    }

    @Test("a client that stops reading is disconnected past the buffer bound; others keep receiving")
    func slowClient() async throws {
        let server = makeServer { $0.streamBufferBytes = 256 << 10 }
        try await withLiveServer(server) { port in
            let slow = try await EventStreamClient.open(port: port, "/big.json", autoRead: true, receiveBuffer: 4096)
            #expect(try await slow.next()?.name == "put")
            // Stop reading.
            try await slow.connection.channel.setOption(.autoRead, value: false).get()
            let fast = try await EventStreamClient.open(port: port, "/big.json")
            #expect(try await fast.next()?.name == "put")
            #expect(server.streamCount == 2)
            let payload = "\"" + String(repeating: "x", count: 64 << 10) + "\""
            var writes = 0
            // Write until the server drops the slow stream (bounded: 64 MB).
            while server.streamCount == 2 && writes < 1_000 {
                try await Self.request(port, "PUT", "/big.json", payload)
                writes += 1
                let event = try await within(10, "fast event \(writes)") { try await fast.nextData() }
                #expect(event?.name == "put")
            }
            #expect(server.streamCount == 1, "after \(writes) writes")
            #expect(writes < 1_000)
            // The fast client keeps receiving.
            try await Self.request(port, "PUT", "/big.json", "1")
            try await Self.expectEvent(fast, "put", "/", 1)
            // The slow one's connection was closed: reading drains what was sent, then ends.
            try await slow.connection.channel.setOption(.autoRead, value: true).get()
            try await within(10, "the slow connection to close") { try await slow.connection.channel.closeFuture.get() }
            await fast.connection.close()
        }
    }

    @Test("graceful shutdown ends open streams and finishes")
    func shutdownEndsStreams() async throws {
        let server = makeServer()
        let task = Task(executorPreference: testServerExecutor) { try await server.run(handleSignals: false) }
        guard let port = await server.listeningPort() else { throw TestFailure("no port") }
        let stream = try await EventStreamClient.open(port: port, "/x.json")
        #expect(try await stream.next()?.name == "put")
        await server.shutdown()
        // Keep-alives may come at any time (a loaded machine can take a while to shut down); nothing else does.
        let after = try await within(10, "the stream to end") {
            var event = try await stream.next()
            while event?.name == "keep-alive" { event = try await stream.next() }
            return event
        }
        #expect(after == nil, "after the shutdown: \(String(describing: after))")
        try await within(10, "run() to return") { try await task.value }
        #expect(server.store.isClosed)
    }

    @Test("streams need the token too")
    func streamAuth() async throws {
        try await withLiveServer(makeServer { $0.authToken = "t0k" }) { port in
            let denied = try await EventStreamClient.open(port: port, "/x.json")
            #expect(denied.head.status == 401)
            let allowed = try await EventStreamClient.open(port: port, "/x.json", headers: [("Authorization", "Bearer t0k")])
            #expect(allowed.head.status == 200)
            #expect(try await allowed.next()?.name == "put")
            await allowed.connection.close()
        }
    }
}
