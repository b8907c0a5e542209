import NIOCore
package import NIOHTTP1
import NIOPosix
import Synchronization

/// HTTP/1.1 to a Canopy server: the command line's REST requests and event streams, and a
/// cluster node's forwarded writes to the leader. Requests to one `HOST:PORT` share a kept-alive
/// connection, pipelined and answered in order; an event stream has a connection of its own
/// (``stream(host:port:_:headers:event:)``).
package final class HTTPClient: Sendable {
    package struct Response: Sendable {
        package var status: Int
        /// The `Location` header, if any.
        package var location: String? = nil
        package var body: [UInt8] = []
    }

    /// Why a request failed: before it was sent (`sent` false: it had no effect) or after (its
    /// effect is unknown). `reason` is short and lower-case ("connection refused").
    package struct Failure: Error, Sendable {
        package var sent: Bool
        package var reason: String
    }

    private struct Connections {
        /// By `HOST:PORT`, each with the number it was opened under.
        var open: [String: (number: Int, channel: EventLoopFuture<any Channel>)] = [:]
        var opened = 0
    }

    private let connections = Mutex(Connections())
    let connectTimeout: TimeAmount
    private let userAgent: String

    package init(userAgent: String, connectTimeout: Duration = .seconds(10)) {
        self.userAgent = userAgent
        self.connectTimeout = TimeAmount(connectTimeout)
    }

    /// Sends one request to `host`:`port` and returns its response, whatever its status. A
    /// server that has not answered after `timeout` (paused, or cut off) has its connection
    /// closed and the request fails, its effect unknown; without a timeout the request waits
    /// for the answer or the connection's end.
    package func send(
        _ method: HTTPMethod, host: String, port: Int, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
        timeout: Duration? = nil
    ) async throws(Failure) -> Response {
        let head = self.head(
            method, Self.authority(host, port), target, headers: headers,
            bodyLength: body?.count ?? (method == .GET || method == .DELETE ? nil : 0))
        let body = body.map { ByteBuffer(bytes: $0) }
        // A kept-alive connection the server closed just before this request went out: the
        // request was not sent, so it goes once more, on a new connection.
        do {
            return try await self.send(head, body, host: host, port: port, timeout: timeout)
        } catch  where !error.sent && error.reason == Self.closedBeforeSending {
            return try await self.send(head, body, host: host, port: port, timeout: timeout)
        }
    }

    private static let closedBeforeSending = "the connection closed before the request was sent"

    private func send(_ head: HTTPRequestHead, _ body: ByteBuffer?, host: String, port: Int, timeout: Duration?) async throws(Failure)
        -> Response
    {
        let key = "\(host):\(port)"
        let (number, future) = self.connection(to: host, port: port)
        let channel: any Channel
        do {
            channel = try await future.get()
        } catch {
            self.forget(key, number)
            throw Failure(sent: false, reason: Self.describe(error))
        }
        let promise = channel.eventLoop.makePromise(of: Response.self)
        let request = PipelinedRequest(head: head, body: body, promise: promise)
        channel.eventLoop.execute {
            do {
                try channel.pipeline.syncOperations.handler(type: PipelinedResponseHandler.self).send(request)
            } catch {
                promise.fail(PipelinedResponseHandler.NotSent())
            }
        }
        let start = ContinuousClock.now
        let expiry = timeout.map { timeout in channel.eventLoop.scheduleTask(in: TimeAmount(timeout)) { channel.close(promise: nil) } }
        do {
            defer { expiry?.cancel() }
            return try await promise.futureResult.get()
        } catch {
            self.forget(key, number)
            channel.close(promise: nil)
            if error is PipelinedResponseHandler.NotSent { throw Failure(sent: false, reason: Self.closedBeforeSending) }
            if let timeout, ContinuousClock.now - start >= timeout { throw Failure(sent: true, reason: "no answer within \(timeout)") }
            throw Failure(sent: true, reason: Self.describe(error))
        }
    }

    /// Closes every kept-alive connection.
    package func close() {
        let all = self.connections.withLock { connections in
            defer { connections.open = [:] }
            return connections.open.values.map(\.channel)
        }
        for future in all { future.whenSuccess { $0.close(promise: nil) } }
    }

    /// `HOST:PORT` for a `Host` header, an IPv6 address in brackets.
    static func authority(_ host: String, _ port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// A request's head: `Host`, `User-Agent`, `Content-Type` and `Content-Length` when it has a
    /// body, and `headers`.
    func head(_ method: HTTPMethod, _ host: String, _ target: String, headers: [(String, String)], bodyLength: Int?) -> HTTPRequestHead {
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: target)
        head.headers.add(name: "Host", value: host)
        head.headers.add(name: "User-Agent", value: self.userAgent)
        if let bodyLength {
            head.headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
            head.headers.add(name: "Content-Length", value: "\(bodyLength)")
        }
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        return head
    }

    private func connection(to host: String, port: Int) -> (Int, EventLoopFuture<any Channel>) {
        let key = "\(host):\(port)"
        return self.connections.withLock { connections in
            if let existing = connections.open[key] { return existing }
            connections.opened += 1
            let number = connections.opened
            let future = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(self.connectTimeout)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(PipelinedResponseHandler { self.forget(key, number) })
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

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
