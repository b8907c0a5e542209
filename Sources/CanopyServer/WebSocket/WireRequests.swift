import Canopy
import CanopyCore
import CanopyWire
import HTTPTypes

/// Answers one connection's data requests, strictly in the order they arrive (an `auth` takes
/// effect for every later request). Reads and listens are answered once the loop has run them,
/// after their data is queued; writes are acknowledged when durable, after the pushes they caused.
struct WireRequests {
    let session: WireSession
    let state: ServerState
    /// Whether this connection acts as the server's administrator (the `--auth-token`).
    var isAdmin: Bool

    private var configuration: ServerConfiguration { self.state.configuration }

    /// Whether requests may read and write: always on an open server (no `--auth-token`), else only
    /// once the connection presented the admin token.
    private var mayAccess: Bool { self.configuration.authToken == nil || self.isAdmin }

    mutating func handle(id: Int64, action: ClientAction) async {
        let outbox = self.session.outbox
        switch action {
        case .stats, .appCheck, .unAppCheck:
            // Statistics are not kept; App Check is not enforced (see the Firebase SDKs article).
            outbox.send(ServerMessage.ok(id: id))
        case .auth(let credential, _, _):
            if self.accepts(credential) {
                self.isAdmin = true
                outbox.send(ServerMessage.ok(id: id))
            } else {
                outbox.send(
                    ServerMessage.failure(
                        id: id, status: "invalid_token",
                        message: "This server accepts only its admin token (user authentication is not configured)."))
            }
        case .unauth:
            self.isAdmin = false
            outbox.send(ServerMessage.ok(id: id))
        case .invalid(let status, let message):
            outbox.send(ServerMessage.failure(id: id, status: status, message: message))
        case .unknown(let name):
            outbox.send(ServerMessage.failure(id: id, status: "invalid_action", message: "Unknown action \"\(name)\"."))
        case .listen, .unlisten, .get, .put, .putPriority, .merge, .onDisconnectPut, .onDisconnectMerge, .onDisconnectCancel:
            guard self.mayAccess else {
                return outbox.send(ServerMessage.failure(id: id, status: "permission_denied", message: "Permission denied"))
            }
            let namespace: Namespace
            do {
                namespace = try await self.session.openNamespace(in: self.state.store)
            } catch {
                let refused = (error as? RESTError)?.status == .forbidden
                let message = (error as? RESTError)?.message ?? "The namespace \"\(self.session.namespaceName)\" cannot be opened."
                return outbox.send(ServerMessage.failure(id: id, status: refused ? "permission_denied" : "unavailable", message: message))
            }
            await self.handleData(id: id, action: action, namespace: namespace)
        }
    }

    /// The admin token, and the emulator's `owner` on a server without one (where everyone may
    /// read and write anyway).
    private func accepts(_ credential: String) -> Bool {
        guard let token = self.configuration.authToken else { return credential == "owner" }
        return CanopyResponder.constantTimeEqual(credential, token)
    }

    private func handleData(id: Int64, action: ClientAction, namespace: Namespace) async {
        let session = self.session
        let outbox = session.outbox
        let hub = namespace.wire
        let database = namespace.database
        switch action {
        case .listen(let path, let query, let tag, _):
            let done = await Self.onLoop(database) { access in hub.listen(session, at: path, query: query, tag: tag, access: access) }
            outbox.send(done ? ServerMessage.listenOK(id: id) : Self.closed(id))
        case .unlisten(let path, let query, let tag):
            let done = await Self.onLoop(database) { access in hub.unlisten(session, at: path, query: query, tag: tag, access: access) }
            outbox.send(done ? ServerMessage.ok(id: id) : Self.closed(id))
        case .get(let path, let query):
            let data: [UInt8]? = await Self.onLoop(database) { access in WireJSON.bytes(access.queryResult(at: path, params: query)) }
            outbox.send(data.map { ServerMessage.response(id: id, status: "ok", data: $0) } ?? Self.closed(id))
        case .put(let path, let data, let hash):
            do {
                try Self.checkWritable(path)
                var converter = try ValueConverter(function: "set", location: path.keys.map(\.string))
                self.write(id: id, on: database, .set(path, try converter.convert(data)), expectedHash: hash)
            } catch {
                outbox.send(ServerMessage.failure(id: id, status: error.code.name, message: error.message))
            }
        case .putPriority(let path, let priority):
            do {
                try Self.checkWritable(path)
                self.write(
                    id: id, on: database, .setPriority(path, try ValueConverter.priority(priority, function: "setPriority")),
                    expectedHash: nil)
            } catch {
                outbox.send(ServerMessage.failure(id: id, status: error.code.name, message: error.message))
            }
        case .merge(let path, let data):
            do {
                try Self.checkWritable(path)
                let entries = try UpdateEntries.entries(data, location: path.keys, function: "update")
                if entries.isEmpty { return outbox.send(ServerMessage.ok(id: id)) }
                self.write(id: id, on: database, WriteOperation(path: path, entries: entries), expectedHash: nil)
            } catch {
                outbox.send(ServerMessage.failure(id: id, status: error.code.name, message: error.message))
            }
        case .onDisconnectPut(let path, let data):
            do {
                try Self.checkWritable(path)
                var converter = try ValueConverter(function: "onDisconnectSetValue", location: path.keys.map(\.string))
                _ = session.addCloseWrite(.set(path, try converter.convert(data)))
                outbox.send(ServerMessage.ok(id: id))
            } catch {
                outbox.send(ServerMessage.failure(id: id, status: error.code.name, message: error.message))
            }
        case .onDisconnectMerge(let path, let data):
            do {
                try Self.checkWritable(path)
                let entries = try UpdateEntries.entries(data, location: path.keys, function: "onDisconnectUpdateChildValues")
                if !entries.isEmpty { _ = session.addCloseWrite(WriteOperation(path: path, entries: entries)) }
                outbox.send(ServerMessage.ok(id: id))
            } catch {
                outbox.send(ServerMessage.failure(id: id, status: error.code.name, message: error.message))
            }
        case .onDisconnectCancel(let path):
            session.cancelCloseWrites(at: path)
            outbox.send(ServerMessage.ok(id: id))
        default:
            break
        }
    }

    private static func checkWritable(_ path: DatabasePath) throws(DatabaseError) {
        if path.isInfo { throw DatabaseError(.invalidPath, "Can't modify data under /.info/.") }
    }

    /// Applies `write` on the loop (a transaction's compare-and-set checks the hash in the same
    /// step) without waiting for it: the acknowledgement is queued when the write is durable.
    private func write(id: Int64, on database: Database, _ write: WriteOperation, expectedHash: String?) {
        let outbox = self.session.outbox
        let accepted = database.onLoop { access in
            if let expectedHash, access.node(at: write.path).wireHash != expectedHash {
                return outbox.send(
                    ServerMessage.failure(id: id, status: "datastale", message: "The transaction's data changed on the server."))
            }
            access.apply(write) { error in
                guard let error else { return outbox.send(ServerMessage.ok(id: id)) }
                outbox.send(ServerMessage.failure(id: id, status: Self.status(of: error), message: error.message))
            }
        }
        if !accepted { outbox.send(Self.closed(id)) }
    }

    /// A client's mistake keeps its code; a failure of the server is `unavailable`.
    static func status(of error: DatabaseError) -> String {
        switch error.code {
        case .invalidPath, .invalidKey, .invalidValue, .invalidPriority, .invalidQuery, .invalidJSON, .writeFailed: return error.code.name
        default: return "unavailable"
        }
    }

    private static func closed(_ id: Int64) -> [UInt8] {
        ServerMessage.failure(id: id, status: "unavailable", message: "The database is closed.")
    }

    /// Runs `body` on the loop and returns its result; `nil` when the database is closed.
    private static func onLoop<T: Sendable>(_ database: Database, _ body: @escaping @Sendable (LoopAccess) -> T) async -> T? {
        try? await database.loop(body)
    }

    private static func onLoop(_ database: Database, _ body: @escaping @Sendable (LoopAccess) -> Void) async -> Bool {
        (try? await database.loop(body)) != nil
    }
}
