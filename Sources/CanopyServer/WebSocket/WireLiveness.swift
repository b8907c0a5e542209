import NIOCore
import NIOWebSocket

/// Finds SDK connections whose peer is gone without a close: after an interval in which nothing
/// arrived, it sends a WebSocket ping (every SDK's WebSocket stack answers with a pong); if the
/// next interval passes with nothing either, it closes the connection, so its onDisconnect work
/// runs. A connection that keeps sending is never pinged.
///
/// A channel handler with one scheduled check, not a task with a timer per connection (a task,
/// its stack and a timer: about 4 KB of an idle connection's memory, measured with heaptrack;
/// see *Performance*).
final class WireLiveness: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let interval: TimeAmount
    private var heard = false
    private var pinged = false
    private var check: Scheduled<Void>?

    init(interval: TimeAmount) {
        self.interval = interval
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.schedule(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.stop()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.heard = true
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.stop()
        context.fireChannelInactive()
    }

    private func stop() {
        self.check?.cancel()
        self.check = nil
    }

    private func schedule(_ context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        self.check = context.eventLoop.assumeIsolated().scheduleTask(in: self.interval) { self.tick(context) }
    }

    private func tick(_ context: ChannelHandlerContext) {
        if self.heard {
            self.heard = false
            self.pinged = false
        } else if self.pinged {
            context.close(promise: nil)
            return
        } else {
            self.pinged = true
            let ping = WebSocketFrame(fin: true, opcode: .ping, data: context.channel.allocator.buffer(capacity: 0))
            context.channel.writeAndFlush(ping, promise: nil)
        }
        self.schedule(context)
    }
}
