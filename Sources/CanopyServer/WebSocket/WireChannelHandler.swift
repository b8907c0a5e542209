import CanopyWire
import NIOCore
import NIOWebSocket

/// Reads an upgraded SDK connection's frames on its event loop, after NIO's frame decoder: the
/// rules of RFC 6455 that the decoder leaves to its user (client frames masked, pings answered,
/// fragments reassembled, text checked as UTF-8, the close handshake), then the SDKs' split
/// messages, each whole message handed to its ``WireConnection``.
///
/// Frames the decoder itself refuses (one over the size limit, a fragmented or long control
/// frame) are answered by NIO's `WebSocketProtocolErrorHandler` with a close frame.
final class WireChannelHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let decision: WireUpgrade.Decision
    private var assembler: WireFrameAssembler
    /// The data of a message sent in fragments, so far, and whether it is text.
    private var fragments: (data: ByteBuffer, isText: Bool)?
    /// A close frame was sent or received: nothing more is read.
    private var closing = false

    init(_ decision: WireUpgrade.Decision) {
        self.decision = decision
        switch decision {
        case .serve(let connection):
            self.assembler = WireFrameAssembler(maxMessageBytes: connection.state.configuration.maxBodyBytes)
        case .shutDown:
            self.assembler = WireFrameAssembler(maxMessageBytes: 0)
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        switch self.decision {
        case .serve(let connection):
            connection.start()
        case .shutDown(let reason):
            self.closing = true
            let message = context.channel.allocator.buffer(bytes: ServerMessage.shutdown(reason: reason))
            context.write(self.wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: message)), promise: nil)
            self.sendClose(context, .policyViolation)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .serve(let connection) = self.decision { connection.end() }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = self.unwrapInboundIn(data)
        if self.closing {
            // Waiting for the client's close frame, which ends the connection.
            if frame.opcode == .connectionClose { context.close(promise: nil) }
            return
        }
        // RFC 6455, 5.1: a client masks every frame; a server closes on one that is not.
        guard frame.maskKey != nil else { return self.fail(context, .protocolError, "Client frames must be masked.") }
        switch frame.opcode {
        case .ping:
            guard frame.fin, frame.data.readableBytes < 126 else { return self.fail(context, .protocolError) }
            context.writeAndFlush(self.wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .pong:
            guard frame.fin else { return self.fail(context, .protocolError) }
        case .connectionClose:
            self.closing = true
            self.sendClose(context, Self.answer(toClose: frame), thenClose: true)
        case .text, .binary:
            guard frame.reservedBits.isEmpty, self.fragments == nil else { return self.fail(context, .protocolError) }
            if frame.fin {
                self.message(context, frame.unmaskedPayload, isText: frame.opcode == .text)
            } else {
                self.fragments = (frame.unmaskedPayload, frame.opcode == .text)
            }
        case .continuation:
            guard frame.reservedBits.isEmpty, var fragments = self.fragments else { return self.fail(context, .protocolError) }
            self.fragments = nil
            guard fragments.data.readableBytes + frame.data.readableBytes <= WireConnection.maxFrameBytes else {
                return self.fail(context, .messageTooLarge)
            }
            var data = frame.unmaskedPayload
            fragments.data.writeBuffer(&data)
            if frame.fin {
                self.message(context, fragments.data, isText: fragments.isText)
            } else {
                self.fragments = fragments
            }
        default:
            self.fail(context, .protocolError)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The server allows half-closed connections (for HTTP); a WebSocket whose client stopped
        // sending is over.
        if case .inputClosed = event as? ChannelEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // The decoder's errors were answered with a close frame by NIO's protocol error handler;
        // anything else (a reset connection) ends the connection.
        if !(error is NIOWebSocketError) { context.close(promise: nil) }
    }

    /// A whole WebSocket message: one of the SDKs' text frames.
    private func message(_ context: ChannelHandlerContext, _ data: ByteBuffer, isText: Bool) {
        guard case .serve(let connection) = self.decision else { return }
        guard isText else { return self.fail(context, .unacceptableData, "Canopy's protocol uses text frames only.") }
        guard let text = String(validating: data.readableBytesView, as: UTF8.self) else {
            return self.fail(context, .dataInconsistentWithMessage)
        }
        let whole: String?
        do {
            whole = try self.assembler.receive(text)
        } catch .tooManyFrames(let count) {
            return self.fail(context, .messageTooLarge, "A message of \(count) frames is too large.")
        } catch {
            return self.fail(context, .messageTooLarge, "A message is larger than \(self.assembler.maxMessageBytes) bytes.")
        }
        guard let whole else { return }
        do {
            connection.receive(try ClientMessage.reading(whole))
        } catch {
            self.fail(context, .protocolError, "Malformed message: \(error.reason).")
        }
    }

    /// Ends the connection for a protocol error: nothing more is read; the answers to the
    /// requests before it go out, then the close frame.
    private func fail(_ context: ChannelHandlerContext, _ code: WebSocketErrorCode, _ reason: String = "") {
        self.closing = true
        self.fragments = nil
        if case .serve(let connection) = self.decision {
            connection.close(code, reason: reason)
        } else {
            self.sendClose(context, code)
        }
    }

    /// Sends a close frame; `thenClose`: closes the socket once it is written (the answer to the
    /// client's close), otherwise when the client answers or after ``WireConnection/closeTimeout``.
    private func sendClose(_ context: ChannelHandlerContext, _ code: WebSocketErrorCode, thenClose: Bool = false) {
        var data = context.channel.allocator.buffer(capacity: 2)
        data.write(webSocketErrorCode: code)
        let channel = context.channel
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(self.wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)), promise: written)
        if thenClose {
            written.futureResult.whenComplete { _ in channel.close(promise: nil) }
        } else {
            context.eventLoop.scheduleTask(in: WireConnection.closeTimeout) { channel.close(promise: nil) }
        }
    }

    /// The code that answers a client's close frame (RFC 6455, section 7.4): a normal closure, or
    /// a protocol error for a malformed close (one byte of data, a code no endpoint may send, or
    /// a reason that is not UTF-8).
    static func answer(toClose frame: WebSocketFrame) -> WebSocketErrorCode {
        var data = frame.unmaskedData
        guard frame.reservedBits.isEmpty, data.readableBytes != 1 else { return .protocolError }
        guard let code = data.readWebSocketErrorCode() else { return .normalClosure }
        if data.readableBytes > 0, String(validating: data.readableBytesView, as: UTF8.self) == nil { return .protocolError }
        if case .unknown(let value) = code, value < 3000 || value > 4999 { return .protocolError }
        return .normalClosure
    }
}
