import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Closes the connection when a request's body has not arrived in full `timeout` after its head
/// (a slow sender holding a connection and a request task open). Hummingbird's idle timeout
/// does not catch it, since every body byte counts as activity.
///
/// The timer is armed only when a read ends mid-request, so a request whose head and end come in
/// one read (every GET, most small writes) costs no timer.
final class RequestDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let timeout: TimeAmount
    /// A head arrived, its end not yet.
    private var inRequest = false
    private var deadline: NIODeadline?
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head:
            self.inRequest = true
            self.deadline = .now() + self.timeout
        case .body:
            break
        case .end:
            self.inRequest = false
            self.deadline = nil
            self.timer?.cancel()
            self.timer = nil
        }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if self.inRequest, self.timer == nil, let deadline = self.deadline {
            let channel = context.channel
            self.timer = context.eventLoop.scheduleTask(deadline: deadline) { channel.close(promise: nil) }
        }
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.timer?.cancel()
        self.timer = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.timer?.cancel()
        self.timer = nil
    }
}

@available(*, unavailable)
extension RequestDeadline: Sendable {}
