import CanopyTestSupport
import CanopyWire
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import CanopyServer

/// A connection's outgoing messages on an embedded channel, whose event loop runs only when told
/// (`run()`) and whose clock moves only when told (`advanceTime(by:)`).
@Suite("WebSocket outbox")
struct WireOutboxTests {
    /// A channel as an upgraded connection's (NIO's frame encoder at its head).
    static func channel() -> EmbeddedChannel {
        EmbeddedChannel(handler: WebSocketFrameEncoder())
    }

    /// The texts of the frames written since the last call, as a client reads them.
    static func written(_ channel: EmbeddedChannel) throws -> [String] {
        try WrittenFrames.read(channel).map { frame in
            #expect(frame.opcode == .text && frame.fin && frame.maskKey == nil)
            return String(buffer: frame.data)
        }
    }

    /// An outbox of 1 MiB (coalescing pushes for `coalescing` nanoseconds) that expects no
    /// overflow, attached to `channel`.
    static func attachedOutbox(_ channel: EmbeddedChannel, coalescing: UInt64 = 0) -> WireOutbox {
        let outbox = WireOutbox(limit: 1 << 20, coalescing: coalescing) { Issue.record("no overflow expected") }
        outbox.attach(channel)
        return outbox
    }

    static func push(_ outbox: WireOutbox, _ text: String) {
        outbox.send(frame: ByteBuffer(string: text))
    }

    @Test("pushes to a connection written less than the interval ago wait for its end; an answer takes them along at once")
    func coalescing() throws {
        let channel = Self.channel()
        let loop = channel.embeddedEventLoop
        // Ten seconds: nothing in this test takes that long, so only advanceTime ends an interval.
        let outbox = Self.attachedOutbox(channel, coalescing: 10_000_000_000)
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
        let channel = Self.channel()
        let outbox = Self.attachedOutbox(channel)
        for i in 0..<3 {
            Self.push(outbox, "p\(i)")
            channel.embeddedEventLoop.run()
            #expect(try Self.written(channel) == ["p\(i)"])
        }
        _ = try channel.finish()
    }

    @Test("a burst goes out as one buffer of whole frames, in order; a large shared push is not copied; a long message is split")
    func burst() throws {
        let channel = Self.channel()
        let outbox = Self.attachedOutbox(channel)
        let shared = ByteBuffer(string: String(repeating: "s", count: WireOutbox.sharedCopyLimit))
        let long = String(repeating: "é", count: 20_000)
        outbox.send(Array("a1".utf8))
        Self.push(outbox, "p1")
        outbox.send(frame: shared)
        outbox.send(Array("a2".utf8))
        outbox.send(Array(long.utf8))
        channel.embeddedEventLoop.run()
        // Whole frames only: the small messages and the shared push's header in one buffer, the
        // shared text as given, then one buffer for the rest, then the long answer in a chunk.
        var buffers: [ByteBuffer] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { buffers.append(buffer) }
        #expect(buffers.count == 4)
        #expect(buffers.count == 4 && buffers[1].readableBytesView.elementsEqual(shared.readableBytesView))
        var bytes = ByteBuffer()
        for var buffer in buffers { bytes.writeBuffer(&buffer) }
        let texts = try WrittenFrames.decode(bytes).map { String(buffer: $0.data) }
        let split = WireFrameSplitter.frames(long)
        #expect(split.count > 2)
        #expect(texts == ["a1", "p1", String(buffer: shared), "a2"] + split)
        _ = try channel.finish()
    }

    /// Holds the outbox's writes, as a socket whose client does not read: nothing reaches the
    /// channel's head (and no write completes) until ``release()``.
    final class HeldWrites: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        private var held: [(NIOAny, EventLoopPromise<Void>?)] = []
        private var context: ChannelHandlerContext?
        /// The most writes held at once.
        private(set) var mostHeld = 0

        var count: Int { self.held.count }

        func handlerAdded(context: ChannelHandlerContext) { self.context = context }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            self.held.append((data, promise))
            self.mostHeld = max(self.mostHeld, self.held.count)
        }

        func flush(context: ChannelHandlerContext) {}

        /// The client takes the first `count` writes held (all of them by default).
        func release(_ count: Int = .max) {
            guard let context = self.context else { return }
            let taken = self.held.prefix(count)
            self.held.removeFirst(taken.count)
            for (data, promise) in taken { context.write(data, promise: promise) }
            context.flush()
        }
    }

    /// A channel as an upgraded connection's, whose client reads only when the test says.
    static func heldChannel() throws -> (EmbeddedChannel, HeldWrites) {
        let held = HeldWrites()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers([held, WebSocketFrameEncoder()])
        return (channel, held)
    }

    /// An outbox of `limit` bytes (cutting off a client that takes nothing for `stallTimeout`)
    /// attached to a ``heldChannel()``, and how many times it has cut the client off.
    static func heldOutbox(
        limit: Int, stallTimeout: TimeAmount? = nil
    ) throws -> (channel: EmbeddedChannel, held: HeldWrites, outbox: WireOutbox, cut: Locked<Int>) {
        let (channel, held) = try Self.heldChannel()
        let cut = Locked(0)
        let outbox = WireOutbox(limit: limit, stallTimeout: stallTimeout) { cut.withLock { $0 += 1 } }
        outbox.attach(channel)
        return (channel, held, outbox, cut)
    }

    @Test("a long answer goes out as split frames, two chunks at a time as the client takes them, and what was queued behind it follows")
    func longAnswer() throws {
        let (channel, held) = try Self.heldChannel()
        let outbox = Self.attachedOutbox(channel)
        let long = String(repeating: "0123456789", count: 100_000)
        outbox.send(Array("a1".utf8))
        outbox.send(Array(long.utf8))
        Self.push(outbox, "p1")
        outbox.send(Array("a2".utf8))
        var frames: [String] = []
        var rounds = 0
        channel.embeddedEventLoop.run()
        while held.count > 0 {
            held.release()
            channel.embeddedEventLoop.run()
            frames += try Self.written(channel)
            rounds += 1
        }
        #expect(frames == ["a1"] + WireFrameSplitter.frames(long) + ["p1", "a2"])
        // 1 MB in chunks of 128 KB: written over several rounds, never more than two chunks (and
        // the frames before them) waiting for the client.
        #expect(rounds >= 4)
        #expect(held.mostHeld <= 3)
        _ = try channel.finish()
    }

    @Test("while a long answer goes out, other messages past the bound cut the client off; the answer itself and one push alone never do")
    func boundBehindAnswer() throws {
        let (channel, _, outbox, cut) = try Self.heldOutbox(limit: 1_000)
        outbox.send([UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20))
        channel.embeddedEventLoop.run()
        Self.push(outbox, String(repeating: "p", count: 5_000))
        channel.embeddedEventLoop.run()
        #expect(cut.withLock { $0 } == 0)
        Self.push(outbox, "p2")
        #expect(cut.withLock { $0 } == 1)
        _ = try? channel.finish()
    }

    @Test("a client that takes nothing for a whole timeout is cut off; one that takes a chunk each interval is not")
    func stall() throws {
        let (channel, held, outbox, cut) = try Self.heldOutbox(limit: 1 << 20, stallTimeout: .seconds(1))
        let loop = channel.embeddedEventLoop
        outbox.send([UInt8](repeating: UInt8(ascii: "x"), count: 4 << 20))
        loop.run()
        for _ in 0..<5 {
            loop.advanceTime(by: .seconds(1))
            #expect(cut.withLock { $0 } == 0)
            held.release(1)
            loop.run()
        }
        // Now it stops reading.
        loop.advanceTime(by: .seconds(1))
        #expect(cut.withLock { $0 } == 0, "a whole interval without progress has not passed yet")
        loop.advanceTime(by: .seconds(1))
        #expect(cut.withLock { $0 } == 1)
        loop.advanceTime(by: .seconds(5))
        #expect(cut.withLock { $0 } == 1, "cut off once")
        _ = try? channel.finish()
    }

    @Test("a large push goes out in slices, each the client takes counting as progress; the frames arrive whole")
    func largePush() throws {
        let (channel, held, outbox, cut) = try Self.heldOutbox(limit: 4 << 20, stallTimeout: .seconds(1))
        let loop = channel.embeddedEventLoop
        let text = String(repeating: "p", count: 1 << 20)
        Self.push(outbox, text)
        Self.push(outbox, "after")
        loop.run()
        #expect(held.count > 4, "written in slices")
        var frames: [String] = []
        for _ in 0..<4 {
            loop.advanceTime(by: .seconds(1))
            held.release(2)
            loop.run()
        }
        #expect(cut.withLock { $0 } == 0, "a client that takes a slice (after the frame's header) each interval is not cut off")
        held.release()
        loop.run()
        frames += try Self.written(channel)
        #expect(frames.count == 2 && frames.first == text && frames.last == "after", "the push and the one after it, whole")
        _ = try channel.finish()
    }
}
