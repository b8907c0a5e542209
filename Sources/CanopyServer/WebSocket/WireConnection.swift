import Canopy
import CanopyCore
import CanopyWire
import Foundation
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket

/// Serves one upgraded SDK connection: the hello, then each message in order, then, when the
/// socket closes, the connection's onDisconnect writes.
struct WireConnection {
    let state: ServerState
    let session: WireSession
    let host: String
    let previousSession: String?
    /// The credential of the upgrade request's `Authorization: Bearer` header, if any.
    let bearer: String?
    /// The connection's channel, which the outbox writes to.
    let channel: any Channel

    func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, logger: Logger) async {
        let session = self.session
        let sessions = self.state.wireSessions
        sessions.add(session)
        session.outbox.attach(self.channel)
        WireLiveness.watch(self.channel, every: TimeAmount(self.state.configuration.webSocketPingInterval))
        session.outbox.send(ServerMessage.hello(timestamp: Self.now(), host: self.host, session: session.sessionID))
        // The Admin SDKs send their credential on the upgrade; one that proves nothing leaves the
        // connection anonymous until its `auth`. Verified before any request is read.
        if let bearer = self.bearer { session.identity = (try? await self.state.identify(bearer).get()) ?? .anonymous }
        if let previous = self.previousSession.flatMap({ sessions.session($0) }), previous.namespaceName == session.namespaceName {
            // A reconnecting client: its previous connection is gone, whatever the socket says.
            await Self.runCloseWrites(of: previous, logger: logger)
        }
        session.watchExpiry()
        let close = await self.read(inbound, logger: logger)
        session.stopWatchingExpiry()
        // What was queued goes first, then the close frame.
        await session.outbox.finish()
        if let close { try? await outbound.close(close.code, reason: close.reason) }
        sessions.remove(session)
        guard let namespace = session.namespace else { return }
        let hub = namespace.wire
        _ = try? await namespace.database.loop { access in hub.removeAll(session, access: access) }
        await Self.runCloseWrites(of: session, logger: logger)
    }

    /// Reads messages until the client closes; returns the close frame to send when the server ends
    /// the connection (a protocol error).
    private func read(_ inbound: WebSocketInboundStream, logger: Logger) async -> (code: WebSocketErrorCode, reason: String)? {
        var assembler = WireFrameAssembler(maxMessageBytes: self.state.configuration.maxBodyBytes)
        var requests = WireRequests(session: self.session, state: self.state)
        do {
            for try await message in inbound.messages(maxSize: Self.maxFrameBytes) {
                guard case .text(let text) = message else {
                    return (.unacceptableData, "Canopy's protocol uses text frames only.")
                }
                let whole: String?
                do {
                    whole = try assembler.receive(text)
                } catch .tooManyFrames(let count) {
                    return (.messageTooLarge, "A message of \(count) frames is too large.")
                } catch {
                    return (.messageTooLarge, "A message is larger than \(self.state.configuration.maxBodyBytes) bytes.")
                }
                guard let whole else { continue }
                let parsed: ClientMessage
                do {
                    parsed = try ClientMessage(parsing: whole)
                } catch {
                    return (.protocolError, "Malformed message: \(error.reason).")
                }
                switch parsed {
                case .control(let type):
                    if type == "p" { self.session.outbox.send(ServerMessage.pong) }
                case .request(let id, let action):
                    await requests.handle(id: id, action: action)
                }
            }
        } catch {
            logger.debug("WebSocket read ended: \(error)")
        }
        return nil
    }

    /// Applies a session's onDisconnect writes, in order, as ordinary writes judged by the rules
    /// in force now (as the identity that asked for them), each awaited until durable.
    static func runCloseWrites(of session: WireSession, logger: Logger) async {
        // Close-time writes exist only once a request opened the namespace.
        guard let namespace = session.namespace else { return }
        for (write, identity) in session.takeCloseWrites() {
            do {
                try await namespace.database.apply { access in
                    guard let write = namespace.permitted(write, identity: identity, access: access) else {
                        return WriteDecision<Void>.refuse(.permissionDenied)
                    }
                    return .write(write, then: { _ in () })
                }
            } catch {
                logger.warning("onDisconnect write at \(write.path.string) failed: \(error.message)")
            }
        }
    }

    /// The largest WebSocket message a client may send: the SDKs split at 16,384 UTF-16 code units,
    /// which take at most three UTF-8 bytes each.
    static let maxFrameBytes = 3 * WireFrameSplitter.frameLimit + 1024

    static func now() -> Int64 {
        Int64(Date().timeIntervalSince1970 * 1000)
    }
}
