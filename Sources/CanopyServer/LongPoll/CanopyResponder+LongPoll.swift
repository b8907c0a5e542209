import CanopyWire
import HTTPTypes
import Hummingbird
import NIOCore
import NIOPosix

/// The SDKs' long-polling transport on `/.lp`, on the REST server's port: what a browser SDK uses
/// when it cannot open a WebSocket (see ``LongPollRequest`` for the requests, ``LongPollScript``
/// for the answers, ``LongPollSession`` for the session).
extension CanopyResponder {
    func longPoll(_ request: Request, context: Context) async -> Response {
        let request = request
        let parsed: LongPollRequest
        do {
            parsed = try LongPollRequest(parameters: WireUpgrade.parameters(request.uri.description))
        } catch {
            return RESTError(.badRequest, error.message).response
        }
        let configuration = self.state.configuration
        switch parsed {
        case .start(let callback, let namespace, let lastSession):
            guard self.state.wireSessions.isAccepting else {
                return RESTError(.serviceUnavailable, "The server is shutting down.").response
            }
            let eventLoop = context.channel?.eventLoop ?? MultiThreadedEventLoopGroup.singleton.any()
            let session = LongPollSession(callback: callback, state: self.state, eventLoop: eventLoop)
            let name = namespace.flatMap { $0.isEmpty ? nil : $0 } ?? configuration.defaultNamespace
            guard NamespaceStore.isValidName(name) else {
                // As on a WebSocket: a shutdown the SDKs log, after which they stop reconnecting.
                let reason = "Invalid namespace \"\(name)\": use 1 to 63 letters, digits, '-' or '_'."
                let reply = LongPollOutbox.Reply.messages(number: 0, [ServerMessage.shutdown(reason: reason)])
                return Self.script(LongPollScript.start(callback: callback, id: session.id, password: session.password, reply: reply))
            }
            // The host the client used (the Host header), never the address the server is bound to.
            let host = request.head.authority ?? "\(configuration.host):\(configuration.port)"
            guard session.start(namespace: name, host: host, lastSession: lastSession) else {
                return RESTError(.serviceUnavailable, "The server is shutting down.").response
            }
            // The start is the first poll: it takes the hello (or, in a cluster, the redirect).
            let reply = await session.outbox.poll()
            return Self.script(LongPollScript.start(callback: callback, id: session.id, password: session.password, reply: reply))
        case .poll(let id, let password, let segments):
            let session: LongPollSession
            switch self.longPollSession(id, password) {
            case .success(let found): session = found
            case .failure(let error): return error.response
            }
            session.receive(segments)
            let reply = await session.outbox.poll()
            return Self.script(LongPollScript.poll(callback: session.callback, reply: reply))
        case .disconnectFrame(let id, let password):
            if case .failure(let error) = self.longPollSession(id, password) { return error.response }
            return Response(
                status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: LongPollScript.disconnectFrame(id: id, password: password))))
        case .disconnect(let id, let password):
            switch self.longPollSession(id, password) {
            case .success(let session): session.close()
            case .failure(let error): return error.response
            }
            return Response(status: .noContent, headers: [.cacheControl: "no-store"])
        }
    }

    /// The open session `id`, if `password` is its own.
    private func longPollSession(_ id: String, _ password: String) -> Result<LongPollSession, RESTError> {
        guard let session = self.state.longPolls.session(id) else {
            return .failure(RESTError(.notFound, "No long-poll session \"\(id)\": it ended; start a new one."))
        }
        guard Self.constantTimeEqual(password, session.password) else {
            return .failure(RESTError(.forbidden, "Wrong password for long-poll session \"\(id)\"."))
        }
        return .success(session)
    }

    private static func script(_ bytes: [UInt8]) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/javascript; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
