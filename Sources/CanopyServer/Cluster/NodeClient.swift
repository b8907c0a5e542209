import CanopyCore
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// HTTP/1.1 from this node to other nodes of its cluster (forwarded writes): one kept-alive
/// connection per node, requests pipelined on it and answered in order.
final class NodeClient: Sendable {
    struct Response: Sendable {
        var status: Int
        var body: [UInt8]
    }

    /// Why a request failed: before it was sent (it had no effect) or after (its effect is
    /// unknown).
    struct Failure: Error {
        var sent: Bool
        var message: String
    }

    private struct Connections {
        /// By `HOST:PORT`, each with the number it was opened under.
        var open: [String: (number: Int, channel: EventLoopFuture<any Channel>)] = [:]
        var opened = 0
    }

    private let connections = Mutex(Connections())

    /// POSTs `body` to `target` at `base` (`http://HOST:PORT`) with `headers`. A node that has
    /// not answered after `timeout` (paused, or cut off) has its connection closed: the request
    /// fails, its effect unknown.
    func post(_ base: String, _ target: String, headers: [(String, String)], body: [UInt8], timeout: Duration) async throws(Failure)
        -> Response
    {
        guard let url = URLComponents(string: base), let host = url.host, let port = url.port else {
            throw Failure(sent: false, message: "\(base) is not an http://HOST:PORT address.")
        }
        let key = "\(host):\(port)"
        let (number, future) = self.connection(to: host, port: port)
        let channel: any Channel
        do {
            channel = try await future.get()
        } catch {
            self.forget(key, number)
            throw Failure(sent: false, message: "Cannot reach the node at \(base): \(error).")
        }
        var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: target)
        head.headers.add(name: "Host", value: key)
        head.headers.add(name: "Content-Type", value: "application/json")
        head.headers.add(name: "Content-Length", value: "\(body.count)")
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        let promise = channel.eventLoop.makePromise(of: Response.self)
        let request = NodeRequest(head: head, body: ByteBuffer(bytes: body), promise: promise)
        channel.eventLoop.execute {
            do {
                try channel.pipeline.syncOperations.handler(type: NodeResponseHandler.self).send(request)
            } catch {
                promise.fail(NodeResponseHandler.NotSent())
            }
        }
        let (seconds, attoseconds) = timeout.components
        let expiry = channel.eventLoop.scheduleTask(in: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)) {
            channel.close(promise: nil)
        }
        do {
            defer { expiry.cancel() }
            return try await promise.futureResult.get()
        } catch {
            self.forget(key, number)
            channel.close(promise: nil)
            throw Failure(sent: !(error is NodeResponseHandler.NotSent), message: "The node at \(base) did not answer: \(error).")
        }
    }

    /// Closes every connection.
    func close() {
        let all = self.connections.withLock { connections in
            defer { connections.open = [:] }
            return connections.open.values.map(\.channel)
        }
        for future in all { future.whenSuccess { $0.close(promise: nil) } }
    }

    private func connection(to host: String, port: Int) -> (Int, EventLoopFuture<any Channel>) {
        let key = "\(host):\(port)"
        return self.connections.withLock { connections in
            if let existing = connections.open[key] { return existing }
            connections.opened += 1
            let number = connections.opened
            let future = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.seconds(5))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(NodeResponseHandler())
                    }
                }
                .connect(host: host, port: port)
            connections.open[key] = (number, future)
            // A connection that closes is forgotten: the next request opens another.
            // (Until then the future holds the client; ``close()`` closes every connection.)
            future.whenSuccess { channel in
                channel.closeFuture.whenComplete { _ in self.forget(key, number) }
            }
            return (number, future)
        }
    }

    /// Forgets connection `number` to `key` (a newer one may have replaced it: that one stays).
    private func forget(_ key: String, _ number: Int) {
        self.connections.withLock { connections in
            if connections.open[key]?.number == number { connections.open[key] = nil }
        }
    }
}

/// A request waiting to go out on a node connection.
private struct NodeRequest: Sendable {
    var head: HTTPRequestHead
    var body: ByteBuffer
    var promise: EventLoopPromise<NodeClient.Response>
}

/// Writes requests and completes their promises with the responses, in order (event loop only).
private final class NodeResponseHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    /// The connection closed before the request was written.
    struct NotSent: Error {}

    private var context: ChannelHandlerContext?
    private var waiting = CircularBuffer<EventLoopPromise<NodeClient.Response>>()
    private var status = 0
    private var body: [UInt8] = []

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func send(_ request: NodeRequest) {
        guard let context = self.context, context.channel.isActive else {
            request.promise.fail(NotSent())
            return
        }
        self.waiting.append(request.promise)
        context.write(self.wrapOutboundOut(.head(request.head)), promise: nil)
        context.write(self.wrapOutboundOut(.body(.byteBuffer(request.body))), promise: nil)
        context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.status = Int(head.status.code)
            self.body = []
        case .body(let buffer):
            self.body += buffer.readableBytesView
        case .end:
            let response = NodeClient.Response(status: self.status, body: self.body)
            self.body = []
            self.waiting.popFirst()?.succeed(response)
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
