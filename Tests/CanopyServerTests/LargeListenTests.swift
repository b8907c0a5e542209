import CanopyCore
import CanopyServer
import Foundation
import NIOCore
import Testing

/// Listens and reads of locations far larger than the live-event buffer: the initial
/// value goes out as the client reads it, whole, and the events after it follow in order; a client
/// that stops reading half-way is cut off by the no-progress timeout, not by the value's size.
@Suite("Large listens", .serialized)
struct LargeListenTests {
    /// A location of `children` children of about `childBytes` bytes of JSON each: its text and
    /// its value.
    static func big(children: Int, childBytes: Int) throws -> (text: String, value: JSONValue) {
        let filler = String(repeating: "x", count: max(0, childBytes - 40))
        var text = "{"
        text.reserveCapacity(children * childBytes + 2)
        for i in 0..<children {
            if i > 0 { text += "," }
            text += #""c\#(String(i + 1_000_000))":{"n":\#(i),"t":"\#(filler)"}"#
        }
        text += "}"
        return (text, try json(text))
    }

    /// 30 MB in 150,000 children: well past the 4 MB buffer and the sockets' buffers.
    static let location = Result { try Self.big(children: 150_000, childBytes: 210) }

    /// Writes the location at `/big`.
    static func writeBig(_ port: Int) async throws -> JSONValue {
        let (text, value) = try Self.location.get()
        #expect(text.utf8.count > 28 << 20)
        let put = try await StreamTests.request(port, "PUT", "/big.json?print=silent", text)
        #expect(put.status == 204)
        return value
    }

    /// Reads events from `stream` until the first that is not a keep-alive, within the hang guard.
    static func initial(_ stream: EventStreamClient) async throws -> EventStreamClient.Event {
        guard let event = try await within(120, "the initial put", { try await stream.nextData() }) else {
            throw TestFailure("the stream ended before its initial put")
        }
        return event
    }

    @Test("an event stream on 30 MB gets the exact value, then the writes made while it was sent, in order")
    func eventStream() async throws {
        try await withLiveServer(makeServer()) { port in
            let value = try await Self.writeBig(port)
            let stream = try await EventStreamClient.open(port: port, "/big.json")
            #expect(stream.head.status == 200)
            // Written while the initial value is (most likely) still going out: they come after it.
            for i in 0..<3 { try await StreamTests.request(port, "PUT", "/big/c1000007/n.json", "\(100 + i)") }
            let event = try await Self.initial(stream)
            #expect(event.name == "put")
            let payload = try event.payload()
            #expect(payload.path == "/")
            #expect(payload.data == value)
            for i in 0..<3 { try await StreamTests.expectEvent(stream, "put", "/c1000007/n", .int(Int64(100 + i))) }
            await stream.connection.close()
        }
    }

    @Test("a stream that stops reading half-way through a large value is cut off after the no-progress timeout; another keeps going")
    func stalledEventStream() async throws {
        let server = makeServer { $0.slowClientTimeout = .seconds(3) }
        try await withLiveServer(server) { port in
            let value = try await Self.writeBig(port)
            let slow = try await EventStreamClient.open(port: port, "/big.json", receiveBuffer: 4096)
            // Some of the value arrives; then the client stops reading.
            var taken = 0
            while taken < 256 << 10, let chunk = try await within(60, "the start of the value", { try await slow.connection.readChunk() }) {
                taken += chunk.count
            }
            try await slow.connection.channel.setOption(.autoRead, value: false).get()
            let fast = try await EventStreamClient.open(port: port, "/big.json")
            let event = try await Self.initial(fast)
            #expect(try event.payload().data == value)
            // The slow one is cut off (waited for, with a hang guard).
            try await within(60, "the slow stream to be cut off") {
                while server.streamCount > 1 { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(server.streamCount == 1)
            // The other keeps receiving.
            try await StreamTests.request(port, "PUT", "/big/c1000001/n.json", "7")
            try await StreamTests.expectEvent(fast, "put", "/c1000001/n", 7)
            let metrics = try await StreamTests.request(port, "GET", "/.metrics")
            #expect(metrics.body.contains(#"canopy_slow_clients_total{transport="sse"} 1"#), "\(metrics.body)")
            // Its connection was closed: reading drains what was sent, then ends.
            try await slow.connection.channel.setOption(.autoRead, value: true).get()
            try await within(60, "the slow connection to close") { try await slow.connection.channel.closeFuture.get() }
            await fast.connection.close()
        }
    }

    @Test("GET of 30 MB, plain, print=pretty and format=export, gives the value")
    func reads() async throws {
        try await withLiveServer(makeServer()) { port in
            let value = try await Self.writeBig(port)
            for query in ["", "?print=pretty", "?format=export"] {
                let read = try await StreamTests.request(port, "GET", "/big.json\(query)")
                #expect(read.status == 200, "\(query)")
                #expect(try json(read.body) == value, "\(query)")
            }
        }
    }

    @Test("a read or stream larger than the largest answer is refused with an error naming the limit")
    func tooLarge() async throws {
        try await withLiveServer(makeServer { $0.maxResponseBytes = 1 << 20 }) { port in
            _ = try await Self.writeBig(port)
            for (target, headers) in [("/big.json", []), ("/big.json", [("Accept", "text/event-stream")])] {
                let read = try await StreamTests.request(port, "GET", target, headers: headers)
                #expect(read.status == 400, "\(headers)")
                #expect(read.body.contains("exceeds the maximum size") && read.body.contains("(1 MB)"), "\(read.body)")
            }
            // A part of it that fits is served.
            #expect(try await StreamTests.request(port, "GET", "/big.json?orderBy=%22$key%22&limitToFirst=10").status == 200)
        }
    }

    @Test(
        "the WebSocket protocol: a listen on 30 MB gets the exact value in split frames, then the writes made meanwhile, in order; a read too",
        .enabled(if: PythonClient.runnable, PythonClient.skipReason))
    func webSocket() async throws {
        try await WireProtocolTests.play("large_listen", on: makeServer())
    }

    @Test(
        "the WebSocket protocol: a listen or read larger than the largest answer is refused with too_big, naming the limit",
        .enabled(if: PythonClient.runnable, PythonClient.skipReason))
    func webSocketTooLarge() async throws {
        try await WireProtocolTests.play("too_big", on: makeServer { $0.maxResponseBytes = 1 << 20 })
    }

    @Test(
        "the WebSocket protocol: a client that stops reading half-way through a large value is cut off after the no-progress timeout; another keeps going",
        .enabled(if: PythonClient.runnable, PythonClient.skipReason))
    func stalledWebSocket() async throws {
        try await WireProtocolTests.play("stalled_large_listen", on: makeServer { $0.slowClientTimeout = .seconds(3) })
    }
}
