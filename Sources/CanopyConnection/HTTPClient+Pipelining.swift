import NIOCore
import NIOHTTP1

/// A request waiting to go out on a kept-alive connection.
struct PipelinedRequest: Sendable {
    var head: HTTPRequestHead
    var body: ByteBuffer?
    var promise: EventLoopPromise<HTTPClient.Response>
}

/// Writes requests on a kept-alive connection and completes their promises with the responses,
/// in order (event loop only).
final class PipelinedResponseHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    /// The connection closed before the request was written.
    struct NotSent: Error {}

    private var context: ChannelHandlerContext?
    private var waiting = CircularBuffer<EventLoopPromise<HTTPClient.Response>>()
    private var response = HTTPClient.Response(status: 0)
    private var keepAlive = true
    /// Takes the connection out of its client's pool: called before the answer that closes it is
    /// handed on, so that the next request opens a new one.
    private let retire: @Sendable () -> Void

    init(retire: @escaping @Sendable () -> Void) {
        self.retire = retire
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func send(_ request: PipelinedRequest) {
        guard let context = self.context, context.channel.isActive else {
            request.promise.fail(NotSent())
            return
        }
        self.waiting.append(request.promise)
        context.write(self.wrapOutboundOut(.head(request.head)), promise: nil)
        if let body = request.body { context.write(self.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.response = HTTPClient.Response(status: Int(head.status.code), location: head.headers.first(name: "Location"))
            self.keepAlive = head.isKeepAlive
        case .body(let buffer):
            self.response.body += buffer.readableBytesView
        case .end:
            let response = self.response
            self.response = HTTPClient.Response(status: 0)
            let answered = self.waiting.popFirst()
            if !self.keepAlive {
                // `Connection: close`: the server closes after this answer.
                self.retire()
                context.close(promise: nil)
            }
            answered?.succeed(response)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.failAll(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.failAll(error)
        context.close(promise: nil)
    }

    private func failAll(_ error: any Error) {
        while let promise = self.waiting.popFirst() { promise.fail(error) }
    }
}
