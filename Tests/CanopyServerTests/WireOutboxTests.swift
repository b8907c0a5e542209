import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import CanopyServer

/// A connection's outgoing messages on an embedded channel, whose event loop runs only when told
/// (`run()`) and whose clock moves only when told (`advanceTime(by:)`).
@Suite("WebSocket outbox")
struct WireOutboxTests {
    /// The texts of the frames written since the last call.
    static func written(_ channel: EmbeddedChannel) throws -> [String] {
        var texts: [String] = []
        while let frame = try channel.readOutbound(as: WebSocketFrame.self) {
            #expect(frame.opcode == .text && frame.fin)
            texts.append(String(buffer: frame.unmaskedData))
        }
        return texts
    }

    static func push(_ outbox: WireOutbox, _ text: String) {
        outbox.send(frame: ByteBuffer(string: text))
    }

    @Test("pushes to a connection written less than the interval ago wait for its end; an answer takes them along at once")
    func coalescing() throws {
        let channel = EmbeddedChannel()
        let loop = channel.embeddedEventLoop
        // Ten seconds: nothing in this test takes that long, so only advanceTime ends an interval.
        let outbox = WireOutbox(limit: 1 << 20, coalescing: 10_000_000_000) { Issue.record("no overflow expected") }
        outbox.attach(channel)
        // A quiet connection's push goes at once.
        Self.push(outbox, "p1")
        loop.run()
        #expect(try Self.written(channel) == ["p1"])
        // The next ones wait for the interval…
        Self.push(outbox, "p2")
        Self.push(outbox, "p3")
        loop.run()
        #expect(try Self.written(channel).isEmpty)
        // …unless an answer comes: it goes at once, after the pushes queued before it.
        outbox.send(Array(#"{"answer":1}"#.utf8))
        loop.run()
        #expect(try Self.written(channel) == ["p2", "p3", #"{"answer":1}"#])
        // A push after that waits for the end of the interval, then goes with the others.
        Self.push(outbox, "p4")
        outbox.send(Array("p5".utf8), push: true)
        loop.run()
        #expect(try Self.written(channel).isEmpty)
        loop.advanceTime(by: .seconds(10))
        #expect(try Self.written(channel) == ["p4", "p5"])
        _ = try channel.finish()
    }

    @Test("without an interval every push is written at once, in order")
    func noCoalescing() throws {
        let channel = EmbeddedChannel()
        let outbox = WireOutbox(limit: 1 << 20) { Issue.record("no overflow expected") }
        outbox.attach(channel)
        for i in 0..<3 {
            Self.push(outbox, "p\(i)")
            channel.embeddedEventLoop.run()
            #expect(try Self.written(channel) == ["p\(i)"])
        }
        _ = try channel.finish()
    }
}
