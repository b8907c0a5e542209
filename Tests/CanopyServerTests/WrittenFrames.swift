import NIOCore
import NIOEmbedded
import NIOWebSocket

/// The WebSocket frames a server's embedded channel wrote: the bytes that reached the head of
/// its pipeline, read back with NIO's frame decoder (the outbox writes whole frames below NIO's
/// encoder, so only the bytes tell what a client receives).
enum WrittenFrames {
    static func read(_ channel: EmbeddedChannel) throws -> [WebSocketFrame] {
        var bytes = ByteBuffer()
        while var chunk = try channel.readOutbound(as: ByteBuffer.self) { bytes.writeBuffer(&chunk) }
        return try self.decode(bytes)
    }

    /// The frames in `bytes`, which must hold whole frames only.
    static func decode(_ bytes: ByteBuffer) throws -> [WebSocketFrame] {
        let decoder = EmbeddedChannel(handler: ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 1 << 24)))
        try decoder.writeInbound(bytes)
        var frames: [WebSocketFrame] = []
        while let frame = try decoder.readInbound(as: WebSocketFrame.self) { frames.append(frame) }
        _ = try decoder.finish()
        return frames
    }
}
