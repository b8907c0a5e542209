import NIOCore
import NIOWebSocket

/// An SDK connection carried by a WebSocket: its outbox writes to the socket, the server pings
/// it (``WireLiveness``), and it ends with a close frame.
struct WebSocketTransport: WireTransport {
    let channel: any Channel
    let outbox: WireOutbox
    let state: ServerState

    func open() {
        self.state.metrics.countWebSocketOpened()
        self.outbox.attach(self.channel)
        try? self.channel.pipeline.syncOperations.addHandler(
            WireLiveness(interval: TimeAmount(self.state.configuration.webSocketPingInterval)), position: .first)
    }

    /// What was queued goes first, then the close frame; the handler closes the socket when the
    /// client answers it (or after ``WireConnection/closeTimeout``).
    func close(_ code: WebSocketErrorCode, reason: String) async {
        await self.outbox.finish()
        var data = self.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        let channel = self.channel
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, data: data), promise: nil)
        channel.eventLoop.scheduleTask(in: WireConnection.closeTimeout) { channel.close(promise: nil) }
    }

    func abort() {
        self.channel.close(promise: nil)
    }
}
