import Foundation
import NIOCore
import NIOPosix
import NIOWebSocket
import Synchronization

// B20: the first value of a listen on a large location (27 MB of JSON in 200,000 children) over
// the SDKs' WebSocket protocol and over an event stream, against a REST GET of it in the same run,
// on `canopy serve` (the server child of B9). The initial value goes out as the client reads it
// (split frames on the WebSocket, slices on the stream); a GET is written whole.

/// The B20 scenario (appended to `scenarios` in main.swift).
var largeListenScenarios: [Scenario] {
    [
        Scenario(name: "B20.listen.27mb", stores: [.memory]) { try largeListen("B20.listen.27mb", children: 200_000, $0) },
        Scenario(name: "B20.listen.27mb.x10", stores: [.memory]) {
            try largeListeners("B20.listen.27mb.x10", children: 200_000, count: 10, $0)
        },
    ]
}

/// The JSON text of the B20 location: about 135 bytes a child, 27 MB for 200,000.
func largeLocationJSON(children: Int) -> String {
    let filler = String(repeating: "x", count: 103)
    var json = "{"
    json.reserveCapacity(children * 136)
    for i in 0..<children {
        if i > 0 { json += "," }
        json += "\"c\(1_000_000 + i)\":{\"n\":\(i),\"t\":\"\(filler)\"}"
    }
    json += "}"
    return json
}

/// Writes the location, then has `count` SDK connections listen to it at once; reports the
/// server's peak RSS (to compare with one listener's in `B20.listen.27mb`: the listens share one
/// rendering) and checks that every listen got the whole value.
func largeListeners(_ name: String, children requested: Int, count: Int, _ store: Store) throws -> BenchResult {
    let children = Bench.scaled(requested)
    let server = try ServerChild(store)
    defer { server.stop() }
    let port = server.port
    let json = largeLocationJSON(children: children)
    _ = try blocking { [json] in try await fetch(port: port, "/big.json?print=silent", method: "PUT", body: json) }
    let got = try blocking { try await fetch(port: port, "/big.json") }
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
    defer { try? group.syncShutdownGracefully() }
    let start = monotonicNanos()
    let values = try blocking {
        try await withThrowingTaskGroup(of: String.self) { tasks in
            for _ in 0..<count { tasks.addTask { try await FirstValueClient.listen(port: port, path: "big", group: group) } }
            var values: [String] = []
            for try await value in tasks { values.append(value) }
            return values
        }
    }
    let seconds = secondsSince(start)
    let peak = server.peakRSSBytes
    let expected = #"{"t":"d","d":{"a":"d","b":{"p":"big","d":"# + got + "}}}"
    let wrong = values.filter { $0 != expected }.count
    return BenchResult(
        scenario: name, store: store, n: count, seconds: seconds,
        extra: [
            ("children", .int(children)), ("value_mb", .double(Double(got.utf8.count) / 1e6, 1)), ("listeners", .int(count)),
            ("server_peak_rss_mb", .double(Double(peak) / 1_048_576, 1)),
        ],
        check: wrong == 0 && values.count == count ? "ok" : "FAIL \(wrong) of \(count) listens did not get the whole value")
}

/// Writes the location, then times, one after the other on fresh connections: a GET, an event
/// stream's initial `put`, and a WebSocket listen's initial data (count frame and pieces). Checks
/// that each carried the whole value (its length, byte for byte the GET's).
func largeListen(_ name: String, children requested: Int, _ store: Store) throws -> BenchResult {
    let children = Bench.scaled(requested)
    let server = try ServerChild(store)
    defer { server.stop() }
    let port = server.port
    let json = largeLocationJSON(children: children)
    let length = json.utf8.count
    _ = try blocking { [json] in try await fetch(port: port, "/big.json?print=silent", method: "PUT", body: json) }

    var start = monotonicNanos()
    let got = try blocking { try await fetch(port: port, "/big.json") }
    let getSeconds = secondsSince(start)

    start = monotonicNanos()
    let request = "GET /big.json HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n"
    let end = Array("}\n\n\r\n".utf8)
    let stream = try blocking {
        try await exchange(port: port, request) { $0.count > length && $0.suffix(end.count).elementsEqual(end) }
    }
    let sseSeconds = secondsSince(start)
    let streamed = dechunked(stream)

    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { try? group.syncShutdownGracefully() }
    start = monotonicNanos()
    let listened = try blocking { try await FirstValueClient.listen(port: port, path: "big", group: group) }
    let wsSeconds = secondsSince(start)
    let peak = server.peakRSSBytes

    let putPrefix = "event: put\ndata: {\"path\":\"/\",\"data\":"
    let wsPrefix = #"{"t":"d","d":{"a":"d","b":{"p":"big","d":"#
    let check: String
    if got.utf8.count != length {
        check = "FAIL the GET returned \(got.utf8.count) bytes of \(length)"
    } else if streamed != putPrefix + got + "}\n\n" {
        check = "FAIL the stream's initial put (\(streamed.utf8.count) bytes) is not the GET's value"
    } else if listened != wsPrefix + got + "}}}" {
        check = "FAIL the WebSocket listen's data (\(listened.utf8.count) bytes) is not the GET's value"
    } else {
        check = "ok"
    }
    return BenchResult(
        scenario: name, store: store, n: 3, seconds: getSeconds + sseSeconds + wsSeconds,
        extra: [
            ("children", .int(children)), ("value_mb", .double(Double(length) / 1e6, 1)), ("get_s", .double(getSeconds, 3)),
            ("sse_first_value_s", .double(sseSeconds, 3)), ("ws_first_value_s", .double(wsSeconds, 3)),
            ("server_peak_rss_mb", .double(Double(peak) / 1_048_576, 1)),
        ],
        check: check)
}

/// The body of a chunked HTTP response (`bytes`: head and body), as text.
func dechunked(_ bytes: [UInt8]) -> String {
    guard let head = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { return "" }
    var body: [UInt8] = []
    var i = head.upperBound
    while let line = bytes[i...].firstRange(of: Array("\r\n".utf8)),
        let size = Int(String(decoding: bytes[i..<line.lowerBound], as: UTF8.self), radix: 16), size > 0,
        line.upperBound + size <= bytes.count
    {
        body += bytes[line.upperBound..<(line.upperBound + size)]
        i = line.upperBound + size + 2
        guard i <= bytes.count else { break }
    }
    return String(decoding: body, as: UTF8.self)
}

/// One SDK connection that listens to a location and collects its initial data: the count frame
/// and the pieces (or a single frame), reassembled.
final class FirstValueClient: ChannelInboundHandler, WebSocketFrameReceiver, @unchecked Sendable {
    // @unchecked Sendable: its state is touched on the channel's event loop only.
    typealias InboundIn = ByteBuffer

    private let path: String
    private let done: EventLoopPromise<String>
    private var head: [UInt8] = []
    private var upgraded = false
    private var helloSeen = false
    private var remaining: Int?
    private var pieces: [String] = []

    private init(path: String, done: EventLoopPromise<String>) {
        self.path = path
        self.done = done
    }

    /// Connects, listens to `path`, and returns the text of the listen's initial data message.
    static func listen(port: Int, path: String, group: any EventLoopGroup) async throws -> String {
        let loop = group.next()
        let done = loop.makePromise(of: String.self)
        let client = FirstValueClient(path: path, done: done)
        let channel = try await ClientBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(client) }
            }
            .connect(host: "127.0.0.1", port: port).get()
        defer { channel.close(promise: nil) }
        return try await done.futureResult.get()
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(NIOAny(ByteBuffer(string: WebSocketUpgrade.request)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let upgrading = WebSocketUpgrade.channelRead(
            data, for: self, head: &self.head, upgraded: &self.upgraded, maxFrameSize: 1 << 28, context: context)
        if !upgrading {
            self.done.fail(BenchError("the WebSocket upgrade was refused"))
            context.close(promise: nil)
        }
    }

    func received(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
        guard frame.opcode == .text else { return }
        self.received(String(buffer: frame.unmaskedData), context: context)
    }

    fileprivate func received(_ text: String, context: ChannelHandlerContext) {
        if !self.helloSeen {
            self.helloSeen = true
            let listen = #"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/\#(self.path)","h":""}}}"#
            let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(string: listen))
            context.channel.writeAndFlush(frame, promise: nil)
            return
        }
        if let remaining = self.remaining {
            self.pieces.append(text)
            self.remaining = remaining - 1
            if remaining == 1 { self.done.succeed(self.pieces.joined()) }
        } else if text.utf8.count <= 6, let count = Int(text) {
            self.remaining = count
        } else {
            self.done.succeed(text)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.done.fail(BenchError("the connection closed before the listen's data arrived"))
    }
}
