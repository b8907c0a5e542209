import Canopy
import CanopyConnection
import CanopyCore
import CanopyLoop
import CanopyWire
import Logging

extension RemoteSync {
    /// Opens a connection unless one is open or opening, or the app asked to stay offline.
    func connect() {
        let (open, timer) = self.lifecycle.connect()
        timer?.cancel()
        guard open else { return }
        let core = self.core
        let box = ConnectionBox()
        let connection = WireConnection.open(url: self.endpoint, lastSession: self.lastSession, logger: self.logger) { event in
            core.perform { [weak core] in
                guard let remote = core?.remote, let connection = box.connection, remote.connection === connection else { return }
                remote.handle(event)
            }
        }
        box.connection = connection
        self.lifecycle.opened(connection)
    }

    /// Closes the connection and stays offline until ``goOnline()``.
    func goOffline() {
        self.left(self.lifecycle.goOffline())
    }

    func goOnline() {
        guard self.lifecycle.goOnline() else { return }
        self.retryDelay = self.options.minimumRetryDelay
        self.connect()
    }

    /// Closing the database (loop thread): offline for good; observers waiting for data are
    /// cancelled; the cache is flushed and closed.
    func close() {
        self.left(self.lifecycle.close())
        let error = DatabaseError(.closed, "The database was closed.")
        for listen in self.listens.values {
            let waiting = listen.waiting
            listen.waiting = []
            for ready in waiting { ready(.failure(error)) }
        }
        for query in self.queries.values {
            let waiting = query.waiting
            query.waiting = []
            for ready in waiting { ready(.failure(error)) }
        }
        // A persistent cache keeps the unacknowledged writes: a database opened on it sends them,
        // so their completions must not read as if they were lost.
        let writeError =
            self.cache == nil
            ? error
            : DatabaseError(
                .closed,
                "The database was closed before the server acknowledged the write; it stays queued in the persistent cache and is sent when a database opens that cache again."
            )
        for write in self.pending {
            write.timeout?.cancel()
            let completion = write.completion
            write.completion = nil
            completion?(writeError)
        }
        let outbox = self.outbox
        self.outbox = []
        for entry in outbox { entry.done(.closed) }
        self.cache?.close()
    }

    private func handle(_ event: WireConnection.Event) {
        switch event {
        case .ready(let hello):
            self.connected(hello)
        case .message(let message):
            self.receive(message)
        case .closed(let reason):
            self.logger.debug("canopy: connection to \(self.endpoint.authority) closed: \(reason)")
            self.connectionLost()
        }
    }

    private func connected(_ hello: ServerHello) {
        guard let connection = self.connection, self.lifecycle.helloReceived(on: connection) else { return }
        self.resetsWithoutHello = []
        self.lastSession = hello.session
        self.serverTimeOffset = hello.timestamp - self.core.clock()
        guard let provider = self.options.authTokenProvider else {
            self.signedIn(token: self.options.authToken, on: connection)
            return
        }
        // Nothing is sent before the credential: the server would judge it signed out.
        let core = self.core
        Task {
            let token: String?
            do {
                token = try await provider()
            } catch {
                core.perform { [weak core] in
                    guard let remote = core?.remote, remote.lifecycle.isCurrent(connection) else { return }
                    remote.logger.error("canopy: the auth token provider failed: \(error); reconnecting")
                    remote.dropConnection()
                    remote.scheduleReconnect()
                }
                return
            }
            core.perform { [weak core] in
                core?.remote?.signedIn(token: token, on: connection)
            }
        }
    }

    /// The connection is ready and `token` (if any) is the credential: sign in, then listen and
    /// send what waited, in order.
    private func signedIn(token: String?, on connection: WireConnection) {
        guard self.lifecycle.signedIn(on: connection) else { return }
        self.retryDelay = self.options.minimumRetryDelay
        self.core.setInfo(connected: true, serverTimeOffset: self.serverTimeOffset)
        if let token {
            self.send({ .auth(id: $0, credential: token) }) { [weak self] outcome in
                if case .failed(let status, _) = outcome {
                    self?.logger.error("canopy: the server refused the auth token: \(status)")
                }
            }
        }
        for (path, listen) in self.listens.sorted(by: { $0.key < $1.key }) where listen.users > 0 {
            self.sendListen(path, listen)
        }
        for query in self.queries.values.sorted(by: { $0.tag < $1.tag }) where query.users > 0 { self.sendListen(query) }
        for write in self.pending { self.send(write) }
        for entry in self.outbox { self.send(entry.request, entry.done) }
    }

    /// Forgets the connection: requests in flight are answered `.disconnected` (writes stay queued
    /// and are sent again), listens are marked to be asked again.
    func dropConnection() {
        self.left(self.lifecycle.drop())
    }

    /// Acts on leaving a connection: closes it, answers its requests in flight, cancels a retry.
    private func left(_ drop: ConnectionStateMachine<WireConnection, LoopTimer>.Drop) {
        drop.timer?.cancel()
        let wasConnected = drop.wasConnected
        drop.connection?.close()
        let inFlight = self.inFlight
        self.inFlight = [:]
        for listen in self.listens.values {
            listen.requestID = nil
            listen.isLive = false
        }
        for query in self.queries.values {
            query.requestID = nil
            query.isLive = false
        }
        for (_, callback) in inFlight.sorted(by: { $0.key < $1.key }) { callback(.disconnected) }
        if wasConnected {
            self.core.setInfo(connected: false, serverTimeOffset: self.serverTimeOffset)
            // What was live is from the cache now.
            self.core.metadataChanged(overlapping: Array(self.listens.keys) + self.queries.keys.map(\.path))
        }
    }

    func scheduleReconnect() {
        let delay = self.retryDelay
        let scheduled = self.lifecycle.scheduleRetry {
            // Jitter of up to a half, so that clients cut off together spread out.
            self.core.loop.schedule(after: delay * Double.random(in: 0.5...1.0)) { [weak self] in
                guard let self, self.lifecycle.retryFired() else { return }
                self.connect()
            }
        }
        // Back off (×1.3, as the SDKs do).
        if scheduled { self.retryDelay = min(delay * 1.3, self.options.maximumRetryDelay) }
    }

    // MARK: - Requests

    /// Sends `request` now when connected and calls `done` with the answer (loop thread);
    /// otherwise answers `.disconnected` at once.
    /// - Returns: The request's number, or `nil` when it was not sent.
    @discardableResult
    func send(_ request: RequestBuilder, _ done: @escaping (ResponseOutcome) -> Void) -> Int64? {
        guard self.isConnected, let connection = self.connection else {
            done(.disconnected)
            return nil
        }
        let id = self.nextRequest
        self.nextRequest += 1
        self.inFlight[id] = done
        guard connection.send(request(id)) else {
            self.inFlight[id] = nil
            done(.disconnected)
            return nil
        }
        return id
    }

    /// Sends `request` now or after the next reconnect, and again after each reconnect until the
    /// server answers it.
    /// - Returns: Its id, for ``forget(_:)``.
    @discardableResult
    func sendReliably(_ request: @escaping RequestBuilder, _ done: @escaping (ResponseOutcome) -> Void) -> UInt64 {
        let id = self.nextOutboxID
        self.nextOutboxID += 1
        let entry = OutboxEntry(id: id, request: request) { [weak self] outcome in
            if case .disconnected = outcome { return }  // sent again on reconnect
            self?.outbox.removeAll { $0.id == id }
            done(outcome)
        }
        self.outbox.append(entry)
        if self.isConnected { self.send(request, entry.done) }
        return id
    }

    /// Stops resending a request from ``sendReliably(_:_:)`` (its answer, if any, is ignored).
    func forget(_ id: UInt64) {
        self.outbox.removeAll { $0.id == id }
    }

    private func receive(_ message: ServerEvent) {
        switch message {
        case .response(let id, let status, let data):
            guard let callback = self.inFlight.removeValue(forKey: id) else { return }
            callback(status == "ok" ? .ok(data) : .failed(status: status, message: data.leafValue.map { "\($0.jsonValue)" } ?? status))
        case .put(let path, let data, let tag):
            if let tag { self.serverQueryPut(data, at: path, tag: tag) } else { self.serverPut(data, at: path) }
        case .merge(let path, let changes, let tag):
            if let tag { self.serverQueryMerge(changes, at: path, tag: tag) } else { self.serverMerge(changes, at: path) }
        case .listenRevoked(let path, let queries):
            self.listensRevoked(at: path, queries: queries)
        case .authRevoked(let status, let reason):
            self.logger.warning("canopy: the server revoked this client's credential: \(status) \(reason)")
            if self.options.authTokenProvider != nil {
                // Sign in again with a fresh token: a new connection asks the provider first.
                self.dropConnection()
                self.scheduleReconnect()
            }
        case .reset(let host):
            self.followReset(to: host)
        case .shutdown(let reason):
            self.logger.warning("canopy: the server closed the connection for good: \(reason)")
            self.goOffline()
        default:
            break
        }
    }
}

/// Lets a connection's handler, made before the connection exists, name it.
// @unchecked Sendable: `connection` is set once, right after `open` returns and before any event
// can reach the loop (events hop to the loop, which reads it after this job ends).
final class ConnectionBox: @unchecked Sendable {
    var connection: WireConnection?
}
