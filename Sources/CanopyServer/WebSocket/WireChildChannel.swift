import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// A connection to the server: HTTP/1 (REST and event streams, served by Hummingbird), or the
/// SDKs' WebSocket protocol on `/.ws`, served by channel handlers on the connection's event loop.
///
/// An upgraded connection keeps no task: NIO's typed upgrader does the handshake and installs
/// its frame decoder and encoder (no hand-written framing), then ``WireChannelHandler`` reads the
/// frames, so an idle SDK connection costs only its objects, not a task's stack (see
/// *Performance*, B11). HTTP connections are served as Hummingbird's `HTTP1Channel` serves them.
///
/// A connection that sends no complete request head within the idle timeout is closed (neither
/// the HTTP handlers nor the WebSocket ones are in place by then).
struct WireChildChannel: ServerChildChannel, HTTPChannelHandler {
    /// What the connection became.
    enum Negotiated: Sendable {
        /// Upgraded: the channel handlers serve it; nothing to await.
        case webSocket
        /// HTTP, served by the responder.
        case http(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// An upgrade this server refuses (a WebSocket request for another path): 400, then closed.
        case refused(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
    }

    struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<Negotiated>
        let channel: any Channel
    }

    let responder: HTTPChannelHandler.Responder
    let http1: HTTP1Channel.Configuration
    let state: ServerState

    init(responder: @escaping HTTPChannelHandler.Responder, http1: HTTP1Channel.Configuration, state: ServerState) {
        self.responder = Self.redirectingLateUpgrades(responder)
        self.http1 = http1
        self.state = state
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            if let timeout = self.http1.idleTimeout { Self.closeUndecided(channel, after: timeout) }
            let attempted = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
            let decided = NIOLoopBoundBox<WireUpgrade.Decision?>(nil, eventLoop: channel.eventLoop)
            let state = self.state
            let upgrader = NIOTypedWebSocketServerUpgrader<Negotiated>(
                maxFrameSize: WireConnection.maxFrameBytes,
                shouldUpgrade: { channel, head in
                    attempted.value = true
                    guard let request = try? HTTPRequest(head, secure: false, splitCookie: false),
                        let decision = WireUpgrade.decide(request, channel: channel, state: state)
                    else { return channel.eventLoop.makeSucceededFuture(nil) }
                    decided.value = decision
                    return channel.eventLoop.makeSucceededFuture(HTTPHeaders())
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        guard let decision = decided.value else { throw ChannelError.inappropriateOperationForState }
                        decided.value = nil
                        try channel.pipeline.syncOperations.addHandler(WireChannelHandler(decision))
                        return Negotiated.webSocket
                    }
                }
            )
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration<Negotiated>(
                upgradeConfiguration: NIOTypedHTTPServerUpgradeConfiguration(
                    upgraders: [upgrader],
                    notUpgradingCompletionHandler: { channel in
                        channel.eventLoop.makeCompletedFuture {
                            let pipeline = channel.pipeline.syncOperations
                            try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                            try pipeline.addHandlers(self.http1.additionalChannelHandlers())
                            try pipeline.addHandler(
                                HTTPConnectionStateHandler(idleTimeout: self.http1.idleTimeout.map { .init($0) }, logger: logger))
                            let http = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                                wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                            return attempted.value ? Negotiated.refused(http) : Negotiated.http(http)
                        }
                    }
                )
            )
            configuration.enablePipelining = false  // NIOAsyncChannel reads one request at a time
            configuration.enableErrorHandling = false  // Hummingbird answers parse errors
            configuration.enableResponseHeaderValidation = false  // HTTPTypes validates them
            configuration.decoderConfiguration.maxHeaderFieldSize = self.http1.httpDecoder.maxHeaderFieldSize
            configuration.decoderConfiguration.maxHeaderListSize = self.http1.httpDecoder.maxHeaderListSize
            configuration.decoderConfiguration.maxHeaderFieldCount = self.http1.httpDecoder.maxHeaderFieldCount
            let negotiated = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(configuration: configuration)
            return Value(negotiated: negotiated, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .webSocket:
                // Served by its channel handlers until it closes; this task ends now.
                return
            case .http(let http):
                await self.handleHTTP(asyncChannel: http, logger: logger)
            case .refused(let http):
                try await http.executeThenClose { _, outbound in
                    let head = HTTPResponse(status: .badRequest, headerFields: [.connection: "close", .contentLength: "0"])
                    try await outbound.write(contentsOf: [.head(head), .end(nil)])
                }
            }
        } catch {
            logger.trace("Connection ended before or during its first request: \(error)")
        }
    }

    /// Closes `channel` if, after `timeout`, it has neither the HTTP handlers (no upgrade) nor the
    /// WebSocket ones: a client that connects and sends nothing, or a head byte by byte.
    private static func closeUndecided(_ channel: any Channel, after timeout: TimeAmount) {
        channel.eventLoop.scheduleTask(in: timeout) {
            let pipeline = channel.pipeline.syncOperations
            let decided =
                (try? pipeline.context(handlerType: HTTP1ToHTTPServerCodec.self)) != nil
                || (try? pipeline.context(handlerType: WebSocketFrameEncoder.self)) != nil
            if !decided { channel.close(promise: nil) }
        }
    }

    /// NIO upgrades only a connection's first request: a later request asking for a WebSocket is
    /// redirected to the same target with the connection closed, so that the client retries the
    /// upgrade on a new connection. Others go to `responder`.
    private static func redirectingLateUpgrades(_ responder: @escaping HTTPChannelHandler.Responder) -> HTTPChannelHandler.Responder {
        struct ClosingAfterRedirect: Error {}
        return { (request: Request, writer: consuming ResponseWriter, channel: any Channel) in
            guard request.headers[.upgrade]?.lowercased() == "websocket" else {
                return try await responder(request, writer, channel)
            }
            let target = request.uri.query.map { "\(request.uri.path)?\($0)" } ?? request.uri.path
            try await writer.writeResponse(
                HTTPResponse(status: .temporaryRedirect, headerFields: [.connection: "close", .location: target]))
            throw ClosingAfterRedirect()
        }
    }
}
