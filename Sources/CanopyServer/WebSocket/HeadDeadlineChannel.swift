import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// HTTP/1 with the WebSocket upgrade, plus a deadline for the first request head.
///
/// hummingbird-websocket installs the HTTP idle timeout only once it has decided not to upgrade,
/// which happens when a first request head is complete: a client that connects and sends nothing
/// (or a head, byte by byte) would never be cut off. This closes such a connection when the idle
/// timeout passes with neither the HTTP handlers (not upgraded) nor the WebSocket ones in place.
struct HeadDeadlineChannel: ServerChildChannel {
    let inner: HTTP1WebSocketUpgradeChannel
    let timeout: TimeAmount?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1WebSocketUpgradeChannel.Value> {
        if let timeout {
            channel.eventLoop.scheduleTask(in: timeout) {
                let pipeline = channel.pipeline.syncOperations
                let decided =
                    (try? pipeline.context(handlerType: HTTP1ToHTTPServerCodec.self)) != nil
                    || (try? pipeline.context(handlerType: WebSocketFrameEncoder.self)) != nil
                if !decided { channel.close(promise: nil) }
            }
        }
        return self.inner.setup(channel: channel, logger: logger)
    }

    func handle(value: HTTP1WebSocketUpgradeChannel.Value, logger: Logger) async {
        await self.inner.handle(value: value, logger: logger)
    }
}
