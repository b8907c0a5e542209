import CanopyWire
import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import CanopyServer

/// An upgraded SDK connection's frame handling (``WireChannelHandler``) on an embedded channel:
/// the WebSocket rules the frame decoder leaves to its user. (Closes the server starts after a
/// protocol error go through the connection's task and are covered over the network by the
/// protocol client's `bad_frames` scenario.)
@Suite("WebSocket frames")
struct WireChannelHandlerTests {
    /// A connection upgraded on an embedded channel (its hello not yet read), and the server state.
    static func connection(namespace: String = "default", authority: String = "127.0.0.1:9000") throws -> (
        EmbeddedChannel, WireUpgrade.Decision, ServerState
    ) {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9000)).wait()
        var configuration = ServerConfiguration()
        configuration.port = 0
        let state = ServerState(configuration: configuration, store: NamespaceStore(directory: nil))
        let request = HTTPRequest(method: .get, scheme: nil, authority: authority, path: "/.ws?v=5&ns=\(namespace)")
        let decision = try #require(WireUpgrade.decide(request, channel: channel, state: state))
        // As the upgrade leaves it: NIO's frame encoder, then the connection's handler.
        try channel.pipeline.syncOperations.addHandlers([WebSocketFrameEncoder(), WireChannelHandler(decision)])
        channel.embeddedEventLoop.run()
        return (channel, decision, state)
    }

    /// A client frame: masked, as clients' frames are.
    static func frame(_ opcode: WebSocketOpcode, _ text: String, fin: Bool = true) -> WebSocketFrame {
        let key: WebSocketMaskingKey = [1, 2, 3, 4]
        var data = ByteBuffer(string: text)
        data.webSocketMask(key)
        return WebSocketFrame(fin: fin, opcode: opcode, maskKey: key, data: data)
    }

    static func written(_ channel: EmbeddedChannel) throws -> [WebSocketFrame] {
        channel.embeddedEventLoop.run()
        return try WrittenFrames.read(channel)
    }

    static func text(_ frame: WebSocketFrame) -> String {
        String(buffer: frame.unmaskedData)
    }

    @Test("the hello comes first; a ping frame is answered with a pong carrying its data")
    func helloAndPing() throws {
        let (channel, _, state) = try Self.connection(authority: "example.test:9000")
        let hello = try Self.written(channel)
        #expect(hello.count == 1)
        #expect(Self.text(hello[0]).hasPrefix(#"{"t":"c","d":{"t":"h","d":{"ts":"#))
        #expect(Self.text(hello[0]).contains(#""h":"example.test:9000""#))
        #expect(state.wireSessions.count == 1)

        try channel.writeInbound(Self.frame(.ping, "are you there"))
        let pong = try Self.written(channel)
        #expect(pong.count == 1)
        #expect(pong.first?.opcode == .pong && pong.first.map(Self.text) == "are you there")
        _ = try? channel.finish()
    }

    @Test("a message sent in fragments is read as one; the SDKs' keep-alive ping is answered")
    func fragments() throws {
        let (channel, _, _) = try Self.connection()
        _ = try Self.written(channel)
        try channel.writeInbound(Self.frame(.text, #"{"t":"c","#, fin: false))
        try channel.writeInbound(Self.frame(.continuation, #""d":{"t":"p","#, fin: false))
        #expect(try Self.written(channel).isEmpty)
        // A ping between fragments is answered at once.
        try channel.writeInbound(Self.frame(.ping, ""))
        #expect(try Self.written(channel).map(\.opcode) == [.pong])
        try channel.writeInbound(Self.frame(.continuation, #""d":{}}}"#))
        let answer = try Self.written(channel)
        #expect(answer.map(Self.text) == [String(decoding: ServerMessage.pong, as: UTF8.self)])
        _ = try? channel.finish()
    }

    @Test("a client's close is answered with a close frame, then the socket closes")
    func clientClose() throws {
        let (channel, _, _) = try Self.connection()
        _ = try Self.written(channel)
        #expect(channel.isActive)
        var data = ByteBuffer()
        data.write(webSocketErrorCode: .goingAway)
        let key: WebSocketMaskingKey = [9, 8, 7, 6]
        data.webSocketMask(key)
        try channel.writeInbound(WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: key, data: data))
        let frames = try Self.written(channel)
        #expect(frames.count == 1)
        var answer = try #require(frames.first).unmaskedData
        #expect(frames.first?.opcode == .connectionClose)
        #expect(answer.readWebSocketErrorCode() == .normalClosure)
        channel.embeddedEventLoop.run()
        #expect(!channel.isActive)
    }

    @Test("an invalid namespace gets the protocol's shutdown message and a policy-violation close")
    func invalidNamespace() throws {
        let (channel, decision, _) = try Self.connection(namespace: "no%20spaces")
        guard case .shutDown = decision else {
            Issue.record("expected a shutdown, got \(decision)")
            return
        }
        let frames = try Self.written(channel)
        #expect(frames.count == 2)
        #expect(frames.first.map(Self.text)?.hasPrefix(#"{"t":"c","d":{"t":"s","d":"Invalid namespace"#) == true)
        var close = try #require(frames.last).unmaskedData
        #expect(frames.last?.opcode == .connectionClose && close.readWebSocketErrorCode() == .policyViolation)
        _ = try? channel.finish()
    }

    @Test(
        "the code that answers a client's close",
        arguments: [
            ([], WebSocketErrorCode.normalClosure),
            ([0x03, 0xE8], .normalClosure),
            ([0x03, 0xE9], .normalClosure),
            ([0x0F, 0xA0], .normalClosure),  // 4000: private use
            ([0x03], .protocolError),  // one byte: no code
            ([0x03, 0xEE], .protocolError),  // 1006: never sent in a frame
            ([0x03, 0xE8, 0xFF], .protocolError),  // a reason that is not UTF-8
        ] as [([UInt8], WebSocketErrorCode)])
    func closeAnswer(_ data: [UInt8], _ expected: WebSocketErrorCode) {
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, data: ByteBuffer(bytes: data))
        #expect(WireChannelHandler.answer(toClose: frame) == expected)
    }
}
