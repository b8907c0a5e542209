import NIOCore
import NIOWebSocket

/// The client side of the WebSocket upgrade that the benchmark's SDK clients make by hand: the
/// request, the response head, then NIO's frame codec in the pipeline.
enum WebSocketUpgrade {
    /// The upgrade request for `/.ws` of the default namespace.
    static let request = Self.request(namespace: "default")

    /// The upgrade request for `/.ws` of `namespace`.
    static func request(namespace: String) -> String {
        "GET /.ws?v=5&ns=\(namespace) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    }

    enum Outcome {
        /// The response head is not complete yet.
        case incomplete
        /// The server did not switch protocols.
        case refused
        /// Switched: the bytes after the head are the first frames'.
        case upgraded(rest: ByteBuffer)
    }

    /// Adds `bytes` to the response head read so far (`head`, emptied once complete) and says
    /// whether the upgrade is done.
    static func read(_ bytes: ByteBuffer, into head: inout [UInt8]) -> Outcome {
        head += bytes.readableBytesView
        guard let end = head.firstRange(of: Array("\r\n\r\n".utf8)) else { return .incomplete }
        defer { head = [] }
        guard head.starts(with: Array("HTTP/1.1 101".utf8)) else { return .refused }
        return .upgraded(rest: ByteBuffer(bytes: head[end.upperBound...]))
    }

    /// Puts NIO's frame decoder and encoder and `frames` after `handler`, and passes `rest` on.
    static func installCodec(
        after handler: any ChannelHandler, frames: any ChannelHandler, maxFrameSize: Int, rest: ByteBuffer, context: ChannelHandlerContext
    ) {
        try? context.pipeline.syncOperations.addHandlers(
            [ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: maxFrameSize)), WebSocketFrameEncoder(), frames],
            position: .after(handler))
        if rest.readableBytes > 0 { context.fireChannelRead(NIOAny(rest)) }
    }

    /// A client handler's `channelRead` around the upgrade: reads the response head into `head`;
    /// once the server switched protocols, sets `upgraded` and puts the codec and
    /// ``ClientFrames`` for `handler` after it; from then on passes `data` on. Returns `false` if
    /// the server refused the upgrade.
    static func channelRead<Handler: ChannelInboundHandler & WebSocketFrameReceiver>(
        _ data: NIOAny, for handler: Handler, head: inout [UInt8], upgraded: inout Bool, maxFrameSize: Int, context: ChannelHandlerContext
    ) -> Bool where Handler.InboundIn == ByteBuffer {
        guard !upgraded else {
            context.fireChannelRead(data)
            return true
        }
        switch Self.read(handler.unwrapInboundIn(data), into: &head) {
        case .incomplete:
            return true
        case .refused:
            return false
        case .upgraded(let rest):
            upgraded = true
            Self.installCodec(after: handler, frames: ClientFrames(handler), maxFrameSize: maxFrameSize, rest: rest, context: context)
            return true
        }
    }
}

/// A benchmark client that takes the frames after its upgrade.
protocol WebSocketFrameReceiver: AnyObject {
    func received(_ frame: WebSocketFrame, context: ChannelHandlerContext)
    /// The end of one read's frames.
    func framesReadComplete(context: ChannelHandlerContext)
}

extension WebSocketFrameReceiver {
    func framesReadComplete(context: ChannelHandlerContext) { context.fireChannelReadComplete() }
}

/// The frames after the handshake, handed to their client.
final class ClientFrames<Client: WebSocketFrameReceiver>: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked Sendable: used on the channel's event loop only.
    typealias InboundIn = WebSocketFrame
    unowned let client: Client
    init(_ client: Client) { self.client = client }
    func channelRead(context: ChannelHandlerContext, data: NIOAny) { self.client.received(self.unwrapInboundIn(data), context: context) }
    func channelReadComplete(context: ChannelHandlerContext) { self.client.framesReadComplete(context: context) }
}
