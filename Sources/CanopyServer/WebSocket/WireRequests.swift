import Canopy
import CanopyCluster
import CanopyCore
import CanopyRules
import CanopyWire
import HTTPTypes

/// Answers one connection's data requests. They take effect strictly in the order they arrive:
/// an `auth` counts for every later request, and listens, reads and writes are queued on the loop
/// in that order. Reads and listens are answered once the loop has run them, after their data is
/// queued; writes are acknowledged when durable, after the pushes they caused. (Answers name
/// their request, so a quick answer may pass a slower one.) Every read, listen and write is
/// judged by the namespace's rules as the connection's identity.
struct WireRequests {
    let session: WireSession
    let state: ServerState

    /// Handles a request that needs no waiting, at once, and returns `true`: a listen, read or
    /// write once the connection's namespace is open (with no user token that expired since),
    /// statistics, App Check, and requests answered with an error. Returns `false` for the
    /// others (``handle(id:action:)`` handles them).
    func handleNow(id: Int64, action: ClientAction) -> Bool {
        let outbox = self.session.outbox
        switch action {
        case .stats, .appCheck, .unAppCheck:
            // Statistics are not kept; App Check is not enforced (see the Firebase SDKs article).
            outbox.send(ServerMessage.ok(id: id))
        case .invalid(let status, let message):
            outbox.send(ServerMessage.failure(id: id, status: status, message: message))
        case .unknown(let name):
            outbox.send(ServerMessage.failure(id: id, status: "invalid_action", message: "Unknown action \"\(name)\"."))
        case .listen, .unlisten, .get, .put, .putPriority, .merge, .onDisconnectCancel, .transactionMerge:
            guard let namespace = self.session.namespace, !self.session.identity.hasExpired(by: WireConnection.now()) else { return false }
            self.handleData(id: id, action: action, namespace: namespace)
        case .auth, .unauth, .onDisconnectPut, .onDisconnectMerge:
            return false
        }
        return true
    }

    /// Handles any request, waiting where it must (the first request opens the namespace).
    func handle(id: Int64, action: ClientAction) async {
        if self.handleNow(id: id, action: action) { return }
        let outbox = self.session.outbox
        switch action {
        case .auth(let credential, let authVariable, let noAuth):
            switch await self.state.identify(credential) {
            case .success(let identity):
                await self.become(Self.acting(identity, authVariable: authVariable, noAuth: noAuth))
                outbox.send(ServerMessage.ok(id: id))
            case .failure(let rejection):
                await self.become(.anonymous)
                outbox.send(ServerMessage.failure(id: id, status: rejection.wireStatus, message: rejection.message))
            }
        case .unauth:
            await self.become(.anonymous)
            outbox.send(ServerMessage.ok(id: id))
        case .stats, .appCheck, .unAppCheck, .invalid, .unknown:
            break  // handled at once
        case .listen, .unlisten, .get, .put, .putPriority, .merge, .onDisconnectPut,
            .onDisconnectMerge, .onDisconnectCancel, .transactionMerge:
            await self.expireIdentity()
            let namespace: Namespace
            do {
                let create = self.state.mayCreate(self.session.namespaceName, identity: self.session.identity)
                namespace = try await self.session.openNamespace(in: self.state.store, create: create)
            } catch {
                if let leader = (error as? RESTError)?.redirect {
                    // Another node leads the namespace now: the SDKs follow a redirect at any time
                    // (they reconnect to the host it names at once).
                    outbox.send(ServerMessage.redirect(to: ClusterMembership.hostAndPort(of: leader)))
                    await outbox.finish()
                    return self.session.disconnect()
                }
                if self.state.store.cluster != nil, (error as? RESTError)?.status == .serviceUnavailable {
                    // The node cannot serve the namespace now (its lease lapsed, PostgreSQL is
                    // away): the client reconnects and asks again, rather than failing its listen.
                    await outbox.finish()
                    return self.session.disconnect()
                }
                let status = (error as? RESTError)?.status
                let refused = status == .forbidden || status == .unauthorized
                let message = (error as? RESTError)?.message ?? "The namespace \"\(self.session.namespaceName)\" cannot be opened."
                return outbox.send(ServerMessage.failure(id: id, status: refused ? "permission_denied" : "unavailable", message: message))
            }
            switch action {
            case .onDisconnectPut, .onDisconnectMerge: await self.addCloseWrite(id: id, action: action, namespace: namespace)
            default: self.handleData(id: id, action: action, namespace: namespace)
            }
        }
    }

    /// The identity an `auth` gives: an administrator may act as someone else (the Admin SDKs'
    /// `databaseAuthVariableOverride`: `authvar`, or `noauth` for unauthenticated), judged by rules
    /// as that user.
    static func acting(_ identity: Identity, authVariable: JSONValue?, noAuth: Bool) -> Identity {
        guard identity.isAdmin else { return identity }
        if noAuth { return .anonymous }
        if let authVariable, case .object = authVariable { return .user(AuthContext(variable: authVariable), expires: nil) }
        return identity
    }

    /// Changes the connection's identity; its listens the new identity may not read are revoked.
    /// A user token's expiry is watched from then on (``WireSession/watchExpiry()``).
    private func become(_ identity: Identity) async {
        let previous = self.session.swapIdentity(to: identity)
        await Self.revokeListens(of: self.session, changedFrom: previous, to: identity)
        self.session.watchExpiry()
    }

    /// Revokes the listens `identity` may not read, when it differs from `previous`.
    static func revokeListens(of session: WireSession, changedFrom previous: Identity, to identity: Identity) async {
        guard previous != identity, let namespace = session.namespace else { return }
        let hub = namespace.hub
        _ = try? await namespace.database.loop { access in
            hub.revoke(of: session, access: access) { subscription in
                !namespace.mayRead(subscription.topic.location, query: subscription.topic.query, identity: identity, access: access)
            }
        }
    }

    /// A user token that expired since it was presented, seen by the next request (the timer of
    /// ``WireSession/watchExpiry()`` usually comes first): the client is told (`ac`, it reconnects
    /// with a fresh one) and the connection goes on unauthenticated.
    private func expireIdentity() async {
        await self.session.expireIdentity(ifExpiredAt: WireConnection.now())
    }

    /// Listens, reads and writes are queued on the loop and answered from there, without
    /// awaiting, so that nearly every request is handled on the connection's event loop with no
    /// task (see ``WireConnection``).
    @inline(never)
    private func handleData(id: Int64, action: ClientAction, namespace: Namespace) {
        switch action {
        case .listen(let path, let query, let tag, _):
            self.listen(id: id, path: path, query: query, tag: tag, namespace: namespace)
        case .unlisten(let path, let query, let tag):
            self.unlisten(id: id, path: path, query: query, tag: tag, namespace: namespace)
        case .get(let path, let query):
            self.get(id: id, path: path, query: query, namespace: namespace)
        case .onDisconnectCancel(let path):
            let registrations = self.session.cancelCloseWrites(at: path)
            guard let store = namespace.clusterStore, !registrations.isEmpty else {
                return self.session.outbox.send(ServerMessage.ok(id: id))
            }
            // Answered once PostgreSQL forgot them too (else a new leader could still run them).
            let outbox = self.session.outbox
            let name = namespace.name
            Task {
                do throws(DatabaseError) {
                    try await store.cancelOnDisconnect(registrations, in: name)
                    outbox.send(ServerMessage.ok(id: id))
                } catch {
                    outbox.send(ServerMessage.failure(id: id, status: "unavailable", message: error.message))
                }
            }
        default:
            self.write(id: id, action: action, namespace: namespace)
        }
    }

    /// Judged and started on the loop, in one step (rules replaced after it see the listen),
    /// and answered from there, after the listen's data; not awaited, like a write: what the
    /// connection asks next is queued on the loop behind it.
    private func listen(id: Int64, path: DatabasePath, query: QueryParams?, tag: Int64?, namespace: Namespace) {
        let session = self.session
        let metrics = self.state.metrics
        let hub = namespace.hub
        let identity = session.identity
        let listen = WireListen(location: path, query: query, tag: tag)
        let limit = self.state.configuration.maxResponseBytes
        let accepted = namespace.database.onLoop { access in
            guard namespace.mayRead(path, query: listen.subscription.topic.query, identity: identity, access: access) else {
                return session.outbox.send(Self.denied(id, metrics))
            }
            switch session.listen(listen, hub: hub, limit: limit, access: access) {
            case .added:
                if let query, tag != nil, query.isFiltered, !namespace.declaresIndex(for: query, at: path) {
                    session.outbox.send(ServerMessage.listenOKUnindexed(id: id))
                } else {
                    session.outbox.send(ServerMessage.listenOK(id: id))
                }
            case .tooLarge: session.outbox.send(Self.tooBig(id, limit))
            case .closed: session.outbox.send(Self.closed(id))
            }
        }
        if !accepted { session.outbox.send(Self.closed(id)) }
    }

    private func unlisten(id: Int64, path: DatabasePath, query: QueryParams?, tag: Int64?, namespace: Namespace) {
        let session = self.session
        let hub = namespace.hub
        let accepted = namespace.database.onLoop { access in
            session.unlisten(WireListen(location: path, query: query, tag: tag), hub: hub, access: access)
            session.outbox.send(ServerMessage.ok(id: id))
        }
        if !accepted { session.outbox.send(Self.closed(id)) }
    }

    /// Read on the loop and answered from there, as of every request before it.
    private func get(id: Int64, path: DatabasePath, query: QueryParams, namespace: Namespace) {
        let identity = self.session.identity
        let metrics = self.state.metrics
        let outbox = self.session.outbox
        let judged = query.isFiltered ? query : nil
        let limit = self.state.configuration.maxResponseBytes
        let accepted = namespace.database.onLoop { access in
            guard namespace.mayRead(path, query: judged, identity: identity, access: access) else {
                return outbox.send(Self.denied(id, metrics))
            }
            let result = access.queryResult(at: path, params: query)
            let message = ServerMessage.response(id: id, status: "ok") { WireJSON.append(result, to: &$0) }
            guard message.count <= limit else { return outbox.send(Self.tooBig(id, limit)) }
            outbox.send(message)
        }
        if !accepted { outbox.send(Self.closed(id)) }
    }

    /// A put, merge or transaction: checked and handed to the loop, not awaited.
    @inline(never)
    private func write(id: Int64, action: ClientAction, namespace: Namespace) {
        do {
            switch action {
            case .put(let path, let value, let hash):
                // Checked and converted when the message was read (``ClientAction``).
                self.write(id: id, on: namespace, .set(path, value), expectedHash: hash)
            case .putPriority(let path, let priority):
                try path.checkWritable()
                self.write(
                    id: id, on: namespace, .setPriority(path, try ValueConverter.priority(priority, function: "setPriority")),
                    expectedHash: nil)
            case .merge(let path, let entries):
                if entries.isEmpty { return self.session.outbox.send(ServerMessage.ok(id: id)) }
                self.write(id: id, on: namespace, WriteOperation(path: path, entries: entries), expectedHash: nil)
            case .transactionMerge(let path, let entries, let readHashes):
                var reads: [(DatabasePath, String)] = []
                for (text, hash) in readHashes.sorted(by: { $0.key < $1.key }) {
                    reads.append((try DatabasePath(validating: text, function: "transaction", argument: "read path"), hash))
                }
                self.write(id: id, on: namespace, WriteOperation(path: path, entries: entries), expectedHash: nil, reads: reads)
            default:
                break
            }
        } catch {
            self.session.outbox.send(ServerMessage.failure(id: id, status: error.code.name, message: error.message))
        }
    }

    /// The write an onDisconnect put or merge asks for; `nil` for an empty merge.
    private static func closeWrite(of action: ClientAction) -> WriteOperation? {
        switch action {
        case .onDisconnectPut(let path, let value): return .set(path, value)
        case .onDisconnectMerge(let path, let entries): return entries.isEmpty ? nil : WriteOperation(path: path, entries: entries)
        default: return nil
        }
    }

    /// Records an onDisconnect write, if the rules allow it now (it is judged again when it runs).
    @inline(never)
    private func addCloseWrite(id: Int64, action: ClientAction, namespace: Namespace) async {
        let session = self.session
        guard let write = Self.closeWrite(of: action) else { return session.outbox.send(ServerMessage.ok(id: id)) }
        let identity = session.identity
        var registration: Int64?
        if let follower = namespace.follower {
            // Judged and registered by the leader, under this node's id.
            switch await follower.forwarder.register(ClientWrite(write: write, identity: identity), session: session.sessionID) {
            case .success(let id): registration = id
            case .failure(let refusal): return session.outbox.send(Self.message(id: id, refusal.outcome, metrics: self.state.metrics) ?? [])
            }
        } else {
            let allowed = await Self.onLoop(namespace.database) { access in
                namespace.permitted(write, identity: identity, access: access) != nil
            }
            guard let allowed else { return session.outbox.send(Self.closed(id)) }
            guard allowed else { return session.outbox.send(Self.denied(id, self.state.metrics)) }
            if let cluster = namespace.cluster {
                // Kept in PostgreSQL before it is acknowledged: a new leader runs it if this node dies.
                do throws(DatabaseError) {
                    registration = try await cluster.store.addOnDisconnect(
                        LogRecord.encode(write, sequence: 0, now: 0), session: session.sessionID, under: cluster.lease)
                } catch {
                    return session.outbox.send(ServerMessage.failure(id: id, status: "unavailable", message: error.message))
                }
            }
        }
        _ = session.addCloseWrite(write, identity: identity, registration: registration)
        session.outbox.send(ServerMessage.ok(id: id))
    }

    /// Applies `write` (here, or at the leader from a follower), if the rules allow it (a
    /// transaction's compare-and-set checks the hash in the same step), without waiting for it:
    /// the acknowledgement is queued when the write is durable. A refused write changes nothing
    /// and reaches no listener. `reads`: a multi-location transaction's reads (location, hash of
    /// the data it saw); each must be readable by the client and unchanged, else nothing is
    /// written.
    private func write(
        id: Int64, on namespace: Namespace, _ write: WriteOperation, expectedHash: String?, reads: [(DatabasePath, String)] = []
    ) {
        let outbox = self.session.outbox
        let metrics = self.state.metrics
        var request = ClientWrite(write: write, identity: self.session.identity)
        request.reads = reads.map { (path: $0.0, hash: $0.1) }
        if let expectedHash { request.condition = .hash(expectedHash) }
        namespace.submit(request) { outcome in
            if let message = Self.message(id: id, outcome, metrics: metrics) { outbox.send(message) }
        }
    }

    /// The answer to request `id` that `outcome` stands for.
    static func message(id: Int64, _ outcome: ClientWriteOutcome, metrics: ServerMetrics) -> [UInt8]? {
        switch outcome {
        case .written: return ServerMessage.ok(id: id)
        case .denied: return Self.denied(id, metrics)
        case .stale, .changed:
            return ServerMessage.failure(id: id, status: "datastale", message: "The transaction's data changed on the server.")
        case .failed(let error) where error.code == .closed: return Self.closed(id)
        case .failed(let error): return ServerMessage.failure(id: id, status: Self.status(of: error), message: error.message)
        }
    }

    /// A client's mistake keeps its code; a failure of the server is `unavailable`.
    static func status(of error: DatabaseError) -> String {
        switch error.code {
        case .invalidPath, .invalidKey, .invalidValue, .invalidPriority, .invalidQuery, .invalidJSON, .writeFailed: return error.code.name
        default: return "unavailable"
        }
    }

    /// The answer to a request the rules refuse (counted in the server's metrics).
    private static func denied(_ id: Int64, _ metrics: ServerMetrics) -> [UInt8] {
        metrics.countWebSocketDenied()
        return ServerMessage.failure(id: id, status: "permission_denied", message: "Permission denied")
    }

    /// The answer to a read or listen whose data is longer than `limit` bytes (`too_big`: the
    /// status the SDKs know, their error saying the data is too large for one request).
    private static func tooBig(_ id: Int64, _ limit: Int) -> [UInt8] {
        ServerMessage.failure(id: id, status: "too_big", message: ResponseLimit.exceeded(limit))
    }

    private static func closed(_ id: Int64) -> [UInt8] {
        ServerMessage.failure(id: id, status: "unavailable", message: "The database is closed.")
    }

    /// Runs `body` on the loop and returns its result; `nil` when the database is closed.
    private static func onLoop<T: Sendable>(_ database: Database, _ body: @escaping @Sendable (LoopAccess) -> T) async -> T? {
        try? await database.loop(body)
    }
}
