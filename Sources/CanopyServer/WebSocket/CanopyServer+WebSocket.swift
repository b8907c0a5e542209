import Canopy
import CanopyCore
import CanopyWire
import Foundation
import HTTPTypes
import NIOCore
import NIOWebSocket
import Synchronization

/// The SDKs' realtime protocol on `/.ws?v=5&ns=NAME[&ls=SESSION]`, on the REST server's port.
enum WireUpgrade {
    /// What an accepted upgrade becomes.
    enum Decision: Sendable {
        /// An SDK connection.
        case serve(WireConnection)
        /// A connection told why it is not served (a control `s`: the SDKs log the reason and stop
        /// reconnecting), then closed.
        case shutDown(reason: String)
    }

    /// Whether to upgrade `request` (`nil`: not a WebSocket target this server serves), and what
    /// then serves the connection. Decided on the channel's event loop, at once: the handshake
    /// never waits for Swift concurrency's threads (the upgrade's credential is verified by the
    /// connection, before its first request).
    static func decide(_ request: HTTPRequest, channel: any Channel, state: ServerState) -> Decision? {
        guard let target = request.path, target == "/.ws" || target.hasPrefix("/.ws?"), state.wireSessions.isAccepting else {
            return nil
        }
        let parameters = Self.parameters(target)
        // `s`: a browser on long polling tries to move its session to a WebSocket. Not supported:
        // refused (400), so the SDK drops the attempt at once and stays on long polling.
        if parameters["s"] != nil { return nil }
        let configuration = state.configuration
        let name = parameters["ns"].flatMap { $0.isEmpty ? nil : $0 } ?? configuration.defaultNamespace
        // HTTP/1 carries the Host header as the request's authority.
        let host = request.authority ?? "\(configuration.host):\(configuration.port)"
        // The Admin SDKs send their credential on the upgrade too (`Bearer owner` to an emulator);
        // one that proves nothing leaves the connection anonymous until its `auth`.
        let bearer = request.headerFields[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        guard NamespaceStore.isValidName(name) else {
            return .shutDown(reason: "Invalid namespace \"\(name)\": use 1 to 63 letters, digits, '-' or '_'.")
        }
        let outbox = WireOutbox(
            limit: configuration.streamBufferBytes, answerLimit: configuration.maxResponseBytes,
            stallTimeout: TimeAmount(configuration.slowClientTimeout), coalescing: state.wakes?.intervalNanos ?? 0
        ) {
            // A client that stops reading: cut it off, as a stream is.
            state.metrics.countSlowClient(.webSocket)
            channel.close(promise: nil)
        }
        let session = WireSession(
            sessionID: Self.newSessionID(), namespaceName: name, outbox: outbox, taskExecutor: state.taskExecutor.withLock { $0 }
        ) {
            channel.close(promise: nil)
        }
        let transport = WebSocketTransport(channel: channel, outbox: outbox, state: state)
        return .serve(
            WireConnection(
                state: state, session: session, host: host, previousSession: parameters["ls"], bearer: bearer, transport: transport))
    }

    /// The query parameters of the upgrade's target, by name (the SDKs do not percent-encode them).
    static func parameters(_ target: String) -> [String: String] {
        guard let question = target.firstIndex(of: "?") else { return [:] }
        var parameters: [String: String] = [:]
        for pair in target[target.index(after: question)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let value = parts.count > 1 ? String(parts[1]) : ""
            parameters[String(parts[0])] = value.removingPercentEncoding ?? value
        }
        return parameters
    }

    private static let counter = Atomic<UInt64>(0)

    /// A session id unique to this server run: random bits and a counter.
    static func newSessionID() -> String {
        let n = Self.counter.wrappingAdd(1, ordering: .relaxed).oldValue
        return String(UInt64.random(in: 0...UInt64.max), radix: 36) + "-" + String(n, radix: 36)
    }
}
