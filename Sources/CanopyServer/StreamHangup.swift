import NIOCore

/// Closes a stream's connection as soon as its client closes its side (FIN).
///
/// The HTTP server keeps half-closed connections open (a client may half-close after its
/// request and still read the response), so without this a stream whose client went away
/// cleanly would be noticed only when writing to it failed: after the next event or keep-alive,
/// up to `keepAliveInterval` later. A stream client never half-closes while it still listens.
/// Added at the front of a stream's pipeline once the stream starts.
final class StreamHangup: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Installs it on `channel` (any thread).
    static func install(on channel: any Channel) {
        channel.eventLoop.execute {
            try? channel.pipeline.syncOperations.addHandler(StreamHangup(), position: .first)
        }
    }
}

@available(*, unavailable)
extension StreamHangup: Sendable {}
