import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import CanopyServer

/// The frames the outbox writes itself (``NIOCore/ByteBuffer/writeWireTextFrame(_:)``) are the
/// bytes NIO's `WebSocketFrameEncoder` writes for the same text frame, and NIO's decoder reads
/// them back, at every length encoding (7, 16 and 64 bits) and its edges.
@Suite("WebSocket frame headers")
struct WireFrameHeaderTests {
    static let lengths = [0, 1, 125, 126, 127, 65_535, 65_536, 70_000]

    /// What NIO's encoder writes for an unmasked final text frame carrying `payload`.
    static func encodedByNIO(_ payload: [UInt8]) throws -> [UInt8] {
        let channel = EmbeddedChannel(handler: WebSocketFrameEncoder())
        try channel.writeOutbound(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(bytes: payload)))
        var bytes: [UInt8] = []
        while let chunk = try channel.readOutbound(as: ByteBuffer.self) { bytes += chunk.readableBytesView }
        _ = try channel.finish()
        return bytes
    }

    @Test("the same bytes as NIO's encoder, read back by NIO's decoder", arguments: Self.lengths)
    func matchesNIO(_ length: Int) throws {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 % 94 + 33) }
        var ours = ByteBuffer()
        ours.writeWireTextFrame(payload)
        #expect(Array(ours.readableBytesView) == (try Self.encodedByNIO(payload)))
        #expect(ours.readableBytes - length <= ByteBuffer.wireFrameHeaderLimit)
        let frames = try WrittenFrames.decode(ours)
        #expect(frames.count == 1)
        #expect(frames.first?.fin == true && frames.first?.opcode == .text && frames.first?.maskKey == nil)
        #expect(frames.first.map { Array($0.data.readableBytesView) } == payload)
    }

    @Test("frames written one after another are read back one by one")
    func several() throws {
        var bytes = ByteBuffer()
        let texts = ["a", String(repeating: "b", count: 300), "", String(repeating: "c", count: 70_000)]
        for text in texts { bytes.writeWireTextFrame(Array(text.utf8)) }
        #expect(try WrittenFrames.decode(bytes).map { String(buffer: $0.data) } == texts)
    }
}
