import Foundation
import NIOCore
import NIOPosix
import NIOWebSocket
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

// B11: the SDKs' WebSocket protocol against `canopy serve` (the server child of B9/B10): fan-out
// to listening connections, and writes over WebSocket. The clients do the opening handshake by
// hand (one request, one 101) and then use NIO's WebSocket frame decoder and encoder (the pipelined
// puts of B11.ws.writes write their masked frames themselves, see `WSBenchClient.pumpWrites()`).

/// The B11 scenarios (appended to `scenarios` in main.swift).
var webSocketScenarios: [Scenario] {
    [
        Scenario(name: "B11.ws.c1k.w100", stores: [.memory, .journal]) {
            try wsFanOut("B11.ws.c1k.w100", clients: 1_000, writesPerSecond: 100, $0)
        },
        Scenario(name: "B11.ws.c1k.w1k", stores: [.memory, .journal]) {
            try wsFanOut("B11.ws.c1k.w1k", clients: 1_000, writesPerSecond: 1_000, $0)
        },
        Scenario(name: "B11.ws.c10k.w100", stores: [.memory]) {
            try wsFanOut("B11.ws.c10k.w100", clients: 10_000, writesPerSecond: 100, $0)
        },
        Scenario(name: "B11.ws.c10k.w1k", stores: [.memory]) {
            try wsFanOut("B11.ws.c10k.w1k", clients: 10_000, writesPerSecond: 1_000, $0)
        },
        Scenario(name: "B11.ws.writes", stores: [.memory, .journal]) {
            try wsWrites("B11.ws.writes", connections: 50, writes: 200_000, $0)
        },
    ]
}

/// One protocol client: the opening handshake, then frames. Counts data pushes and, for a
/// sampled client, the latency of each (the written value carries the writer's monotonic time as
/// `"w"`); counts `ok` answers to its own requests.
final class WSBenchClient: ChannelInboundHandler, WebSocketFrameReceiver, @unchecked Sendable {
    // @unchecked Sendable: mutable state is touched on the channel's event loop; the driver reads
    // the atomics, and the latencies only after the loop is shut down.
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    let sampled: Bool
    /// Requests to send once the hello arrived (JSON texts).
    let opening: [String]
    let hellos = Atomic<Int>(0)
    let pushes = Atomic<Int>(0)
    let acks = Atomic<Int>(0)
    let lastIndex = Atomic<Int>(-1)
    let closed = Atomic<Bool>(false)
    var latencies: [UInt64] = []
    private var head: [UInt8] = []
    private var upgraded = false
    private(set) var context: ChannelHandlerContext?
    /// Mask keys for this client's frames: a generator seeded once, not the system's random
    /// source (a system call per frame, which took a large share of the bench's own time).
    private var maskKeys = MaskKeyGenerator()

    /// The upgrade request (of the default namespace unless said otherwise).
    let upgradeRequest: String

    init(sampled: Bool, opening: [String], upgradeRequest: String = WebSocketUpgrade.request) {
        self.sampled = sampled
        self.opening = opening
        self.upgradeRequest = upgradeRequest
        if sampled { self.latencies.reserveCapacity(1 << 16) }
    }

    func channelActive(context: ChannelHandlerContext) {
        self.context = context
        context.writeAndFlush(NIOAny(ByteBuffer(string: self.upgradeRequest)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let upgrading = WebSocketUpgrade.channelRead(
            data, for: self, head: &self.head, upgraded: &self.upgraded, maxFrameSize: 1 << 24, context: context)
        if !upgrading { context.close(promise: nil) }
    }

    func received(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
        if frame.opcode == .ping {
            // Answered, as every WebSocket stack does: the server closes a connection that
            // neither sends nor answers its pings.
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: self.maskKey(), data: frame.unmaskedData)
            return context.channel.writeAndFlush(pong, promise: nil)
        }
        guard frame.opcode == .text else { return }
        self.received(frame.unmaskedData, context: context)
    }

    /// The answers of one read refill the window together, with one flush, as a pipelining
    /// client library does (one write per answer would measure the client's system calls).
    func framesReadComplete(context: ChannelHandlerContext) {
        self.pumpWrites()
        context.fireChannelReadComplete()
    }

    /// The next frame's mask key (clients mask every frame).
    func maskKey() -> WebSocketMaskingKey { .random(using: &self.maskKeys) }

    /// A client frame (masked, as clients must).
    func send(_ text: String) {
        guard let context else { return }
        let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: self.maskKey(), data: ByteBuffer(string: text))
        context.channel.writeAndFlush(frame, promise: nil)
    }

    /// An application message: the hello, an answer (`"r"`) or a push.
    fileprivate func received(_ buffer: ByteBuffer, context: ChannelHandlerContext) {
        let now = monotonicNanos()
        // Read in place: no copy of the message, no array per pattern.
        buffer.withUnsafeReadableBytes { bytes in
            if bytes.starts(with: Self.helloPrefix) {
                self.hellos.wrappingAdd(1, ordering: .relaxed)
                for request in self.opening { self.send(request) }
                return
            }
            if bytes.starts(with: Self.answerPrefix) {
                if Self.find(Self.okStatus, in: bytes) != nil { self.acks.wrappingAdd(1, ordering: .relaxed) }
                // The window is refilled when the read is complete (``framesReadComplete(context:)``).
                if self.inFlight > 0 { self.inFlight -= 1 }
                return
            }
            guard bytes.starts(with: Self.pushPrefix) else { return }
            self.pushes.wrappingAdd(1, ordering: .relaxed)
            // The value is {"i":N,"w":T}: the index and the writer's send time.
            if let i = Self.number(after: Self.indexKey, in: bytes), i > self.lastIndex.load(ordering: .relaxed) {
                self.lastIndex.store(i, ordering: .relaxed)
            }
            if self.sampled, let w = Self.number(after: Self.timeKey, in: bytes), w > 0, now > UInt64(w) {
                self.latencies.append(now - UInt64(w))
            }
        }
    }

    private static let helloPrefix = Array(#"{"t":"c","d":{"t":"h""#.utf8)
    private static let answerPrefix = Array(#"{"t":"d","d":{"r":"#.utf8)
    private static let pushPrefix = Array(#"{"t":"d","d":{"a":"#.utf8)
    private static let okStatus = Array(#""s":"ok""#.utf8)
    private static let indexKey = Array(#""i":"#.utf8)
    private static let timeKey = Array(#""w":"#.utf8)

    // Pipelined puts (B11.ws.writes), on the channel's event loop.
    private var writeKey = 0
    private var writeEnd = 0
    private var inFlight = 0
    private var window = 0

    /// Puts `{"n": key}` at `/w/k<key>` for `count` keys from `first`, `window` at a time.
    func startWrites(first: Int, count: Int, window: Int) {
        self.writeKey = first
        self.writeEnd = first + count
        self.window = window
        self.pumpWrites()
    }

    /// Sends the next puts up to the window as one buffer of masked frames, flushed together
    /// (one write and one system call for the lot, as a pipelining client library batches).
    ///
    /// The frames are written here rather than by NIO's encoder, which takes a buffer, a boxed
    /// frame and a header buffer for each (a third of this process's time, on the two cores it
    /// shares with the server); each is masked with a key of its own, as RFC 6455 asks, and goes
    /// through the server's frame decoder like any client's. They are written from this
    /// handler's context, which sits before the encoder in the pipeline.
    fileprivate func pumpWrites() {
        guard let context, self.writeKey < self.writeEnd && self.inFlight < self.window else { return }
        var frames = context.channel.allocator.buffer(capacity: 96 * (self.window - self.inFlight))
        while self.writeKey < self.writeEnd && self.inFlight < self.window {
            let key = String(self.writeKey)
            self.writeKey += 1
            self.inFlight += 1
            self.text.removeAll(keepingCapacity: true)
            self.text += #"{"t":"d","d":{"r":"#.utf8
            self.text += key.utf8
            self.text += #","a":"p","b":{"p":"/w/k"#.utf8
            self.text += key.utf8
            self.text += #"","d":{"n":"#.utf8
            self.text += key.utf8
            self.text += "}}}}".utf8
            Self.appendMaskedFrame(&self.text, key: self.maskKey(), to: &frames)
        }
        context.writeAndFlush(NIOAny(frames), promise: nil)
    }

    /// The text of the put being written (its storage reused).
    private var text: [UInt8] = []

    /// Appends a final text frame carrying `payload`, masked with `key` (RFC 6455, section 5.2):
    /// the opcode byte, the mask bit with the length (7, 16 or 64 bits), the key, the masked
    /// payload. `payload` is masked in place.
    static func appendMaskedFrame(_ payload: inout [UInt8], key: WebSocketMaskingKey, to out: inout ByteBuffer) {
        out.writeInteger(UInt8(0x81))
        switch payload.count {
        case ..<126: out.writeInteger(UInt8(0x80 | payload.count))
        case ...0xFFFF: out.writeMultipleIntegers(UInt8(0x80 | 126), UInt16(payload.count))
        default: out.writeMultipleIntegers(UInt8(0x80 | 127), UInt64(payload.count))
        }
        out.writeBytes(key)
        for i in payload.indices { payload[i] ^= key[i & 3] }
        out.writeBytes(payload)
    }

    /// Where `needle` starts in `bytes`, if it does.
    static func find(_ needle: [UInt8], in bytes: UnsafeRawBufferPointer) -> Int? {
        guard let first = needle.first, bytes.count >= needle.count else { return nil }
        var i = 0
        while i <= bytes.count - needle.count {
            if bytes[i] == first && needle.indices.allSatisfy({ bytes[i + $0] == needle[$0] }) { return i }
            i += 1
        }
        return nil
    }

    /// The decimal number right after `key` in `bytes`.
    static func number(after key: [UInt8], in bytes: UnsafeRawBufferPointer) -> Int? {
        guard let start = Self.find(key, in: bytes) else { return nil }
        var value = 0
        var j = start + key.count
        guard j < bytes.count, bytes[j] >= 48, bytes[j] <= 57 else { return nil }
        while j < bytes.count, bytes[j] >= 48, bytes[j] <= 57 {
            value = value &* 10 &+ Int(bytes[j] - 48)
            j += 1
        }
        return value
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.closed.store(true, ordering: .relaxed)
    }
}

/// Raises this process's open-file limit to its hard limit (the server child inherits it).
func raiseOpenFiles() {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

/// Connects `clients` and waits until each got its hello and `ready` holds for it.
func connectWebSocketClients(_ clients: [WSBenchClient], port: Int, group: any EventLoopGroup, ready: (WSBenchClient) -> Bool) throws {
    try connectAll(clients, group: group, port: { _ in port }, within: 120, what: "the WebSocket clients", ready: ready)
}

/// B11 fan-out: `clients` connections each listen to `/fan` (a default listen); a REST writer
/// puts `{"i": n, "w": now}` at `writesPerSecond`. Measures pushes delivered per second, the
/// write-to-receive latency (every 10th client), and server memory per idle listening connection.
func wsFanOut(_ name: String, clients requested: Int, writesPerSecond: Int, _ store: Store) throws -> BenchResult {
    raiseOpenFiles()
    let clients = Bench.scaled(requested)
    let duration = max(1.0, 10 * Bench.scale)
    let server = try ServerChild(store)
    defer { server.stop() }
    let port = server.port
    _ = try blocking { try await fetch(port: port, "/fan.json?print=silent", method: "PUT", body: #"{"i":0,"w":0}"#) }
    let baseline = server.rssBytes
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { try? group.syncShutdownGracefully() }
    let listen = #"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/fan","h":""}}}"#
    let counters = (0..<clients).map { WSBenchClient(sampled: $0 % 10 == 0, opening: [listen]) }
    // Ready: the initial data and the listen's answer arrived.
    try connectWebSocketClients(counters, port: port, group: group) {
        $0.pushes.load(ordering: .relaxed) >= 1 && $0.acks.load(ordering: .relaxed) >= 1
    }
    usleep(200_000)
    let perConnection = Double(server.rssBytes - baseline) / Double(clients)
    let initialPushes = counters.reduce(0) { $0 + $1.pushes.load(ordering: .relaxed) }

    let totalWrites = Int(Double(writesPerSecond) * duration)
    let interval = 1_000_000_000 / UInt64(writesPerSecond)
    let writerGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { try? writerGroup.syncShutdownGracefully() }
    let start = monotonicNanos()
    let written = try pacedWrites(port: port, group: writerGroup, count: totalWrites, start: start, interval: interval) { i in
        httpRequest("PUT", "/fan.json?print=silent", body: "{\"i\":\(i + 1),\"w\":\(monotonicNanos())}")
    }
    let writeSeconds = secondsSince(start)
    waitForDelivery(to: counters, of: totalWrites)
    let seconds = secondsSince(start)
    let delivered = counters.reduce(0) { $0 + $1.pushes.load(ordering: .relaxed) } - initialPushes
    let complete = counters.filter {
        $0.lastIndex.load(ordering: .relaxed) == totalWrites && $0.pushes.load(ordering: .relaxed) == totalWrites + 1
    }.count
    return try fanOutResult(
        name, store, delivered: delivered, seconds: seconds, written: written, writes: totalWrites, complete: complete,
        clients: counters, stopping: group, missed: "connections got every push",
        extra: [
            ("connections", .int(clients)), ("writes", .int(totalWrites)), ("writes_per_s", .int(Int(Double(totalWrites) / writeSeconds))),
            ("idle_rss_per_connection_b", .double(perConnection, 0)),
        ])
}

/// B11 writes: `connections` WebSocket connections put `writes` small values in all, each keeping
/// up to 64 requests in flight; measures acknowledged writes per second and checks that every
/// write is there (a shallow read counts the children).
func wsWrites(_ name: String, connections: Int, writes requested: Int, _ store: Store) throws -> BenchResult {
    let writes = Bench.scaled(requested)
    return try withServerChild(store) { server, group in
        let port = server.port
        let perConnection = (writes + connections - 1) / connections
        let clients = (0..<connections).map { _ in WSBenchClient(sampled: false, opening: []) }
        try connectWebSocketClients(clients, port: port, group: group) { $0.hellos.load(ordering: .relaxed) >= 1 }
        let start = monotonicNanos()
        // Each connection keeps up to 64 puts in flight, sending the next as each answer arrives.
        for (c, client) in clients.enumerated() {
            let first = c * perConnection
            let count = max(0, min(perConnection, writes - first))
            client.context?.eventLoop.execute { client.startWrites(first: first, count: count, window: 64) }
        }
        let deadline = monotonicNanos() + 600_000_000_000
        while clients.reduce(0, { $0 + $1.acks.load(ordering: .relaxed) }) < writes && monotonicNanos() < deadline { usleep(1_000) }
        let seconds = secondsSince(start)
        let acknowledged = clients.reduce(0) { $0 + $1.acks.load(ordering: .relaxed) }
        let shallow = try blocking { try await fetch(port: port, "/w.json?shallow=true") }
        let present = shallow.components(separatedBy: ":true").count - 1
        let check =
            acknowledged == writes && present == writes ? "ok" : "FAIL \(acknowledged) acknowledged, \(present) present of \(writes)"
        return BenchResult(
            scenario: name, store: store, n: acknowledged, seconds: seconds, extra: [("connections", .int(connections))], check: check)
    }
}

/// Mask keys for a bench client's frames (SplitMix64, seeded once from the system's source): the
/// masking RFC 6455 asks of clients, without a system call per frame.
struct MaskKeyGenerator: RandomNumberGenerator {
    private var rng = BenchRNG(seed: UInt64.random(in: .min ... .max))

    mutating func next() -> UInt64 { self.rng.next() }
}
