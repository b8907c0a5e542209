import Canopy
import CanopyConnection
import CanopyCore
import CanopyWire
import Logging

extension RemoteSync {
    /// Whether the cache holds the server's whole data at `path`: a listen at it or above has
    /// been answered (on this connection or an earlier one, or in a persisted cache).
    func isComplete(_ path: DatabasePath) -> Bool { self.listen(covering: path) { $0.hasData } }

    /// Whether a listen answered on the current connection covers `path` (its data is not from the cache).
    func isLive(_ path: DatabasePath) -> Bool { self.listen(covering: path) { $0.isLive } }

    /// Whether a listen at `path` or above satisfies `condition`. O(*d*) lookups at depth *d*.
    func listen(covering path: DatabasePath, where condition: (RemoteListen) -> Bool) -> Bool {
        var prefix = DatabasePath.root
        if let listen = self.listens[prefix], condition(listen) { return true }
        for key in path.keys {
            prefix = prefix.appending(key)
            if let listen = self.listens[prefix], condition(listen) { return true }
        }
        return false
    }

    /// Takes a use of the server listen at `path` (asking the server for it on first use), then
    /// calls `ready` once the location is complete in the cache (at once when it already is), or
    /// with the error when the server refuses the listen.
    func acquire(_ path: DatabasePath, ready: @escaping (Result<Void, DatabaseError>) -> Void) {
        let listen = self.listens[path] ?? RemoteListen()
        self.listens[path] = listen
        listen.users += 1
        if listen.users == 1, self.isConnected { self.sendListen(path, listen) }
        if self.isComplete(path) || self.pending.contains(where: { $0.completes(path) }) {
            ready(.success(()))
        } else {
            listen.waiting.append(ready)
            self.waitingForData.insert(path)
        }
    }

    /// A local write that gives whole values to locations (`write`): the listens at or below them
    /// that waited for the server are complete now, as in the SDKs (an offline `setValue` of a
    /// location never synced shows its value), and their observers start.
    ///
    /// - Complexity: O(*w* log *w* · *e*) for *w* listens waiting for their data and *e* entries in
    ///   the write (nothing when no listen waits).
    func completedLocally(by write: PendingWrite) {
        self.queriesCompletedLocally(by: write)
        guard !self.waitingForData.isEmpty else { return }
        for path in self.waitingForData.sorted() {
            guard let listen = self.listens[path], !listen.waiting.isEmpty else {
                self.waitingForData.remove(path)
                continue
            }
            guard write.completes(path) else { continue }
            self.waitingForData.remove(path)
            let waiting = listen.waiting
            listen.waiting = []
            for ready in waiting { ready(.success(())) }
        }
    }

    /// Gives back a use of the listen at `path`; the last one stops the server listen.
    func release(_ path: DatabasePath) {
        guard let listen = self.listens[path] else { return }
        listen.users -= 1
        guard listen.users <= 0 else { return }
        listen.users = 0
        if self.isConnected, listen.requestID != nil {
            self.send({ .unlisten(id: $0, path: path) }) { _ in }
        }
        listen.requestID = nil
        listen.isLive = false
        // A persistent cache keeps what it knows (shown at once, marked from the cache, when the
        // location is observed again); in memory, the data goes stale unwatched, so it is forgotten.
        if self.cache == nil || !listen.hasData { self.listens[path] = nil }
        // Query windows at or below no longer sit in kept data.
        self.refresh(Self.outermost(self.rederiveQueries(touching: [path])))
    }

    /// Asks the server for the listen at `path` on the current connection.
    func sendListen(_ path: DatabasePath, _ listen: RemoteListen) {
        let hash = listen.hasData ? self.serverRoot.node(at: path.keys).wireHash : ""
        listen.requestID = self.send({ .listen(id: $0, path: path, hash: hash) }) { [weak self, weak listen] outcome in
            guard let self, let listen, self.listens[path] === listen else { return }
            switch outcome {
            case .ok:
                let first = !listen.hasData
                listen.hasData = true
                listen.isLive = true
                if first { self.persistListens() }
                self.core.metadataChanged(at: path)
                let waiting = listen.waiting
                listen.waiting = []
                for ready in waiting { ready(.success(())) }
            case .failed(let status, let message):
                self.listenFailed(at: path, error: DatabaseError(serverStatus: status, message: message, path: path))
            case .disconnected, .closed:
                break  // asked again on reconnect
            }
        }
    }

    /// The server refused (or revoked) the listen at `path`: its observers are cancelled with `error`.
    func listenFailed(at path: DatabasePath, error: DatabaseError) {
        guard let listen = self.listens.removeValue(forKey: path) else { return }
        if listen.hasData { self.persistListens() }
        let waiting = listen.waiting
        listen.waiting = []
        for ready in waiting { ready(.failure(error)) }
        for registration in listen.registrations where registration.isActive {
            self.core.cancel(registration, error: error)
        }
    }

    // MARK: - Observers

    /// Registers an observer once its data is in the cache (loop thread): its location complete
    /// for a plain observer, its query's window for a filtered query (sent to the server as one).
    func register(_ registration: EventRegistration, at path: DatabasePath, params: QueryParams, register: @escaping () -> Void) {
        let filtered = params.isFiltered
        self.observerListens[registration.id] = (path, filtered ? params : nil)
        let ready = { [weak self] (result: Result<Void, DatabaseError>) in
            guard let self, registration.isActive else { return }
            switch result {
            case .success:
                if filtered {
                    self.queries[QueryKey(path: path, params: params)]?.registrations.append(registration)
                } else {
                    self.listens[path]?.registrations.append(registration)
                }
                register()
            case .failure(let error):
                self.core.cancel(registration, error: error)
            }
        }
        if filtered {
            self.acquire(QueryKey(path: path, params: params), ready: ready)
        } else {
            self.acquire(path, ready: ready)
        }
    }

    /// An observer went away (loop thread).
    func unregistered(_ registration: EventRegistration) {
        guard let (path, params) = self.observerListens.removeValue(forKey: registration.id) else { return }
        if let params {
            let key = QueryKey(path: path, params: params)
            self.queries[key]?.registrations.removeAll { $0 === registration }
            self.release(key)
        } else {
            self.listens[path]?.registrations.removeAll { $0 === registration }
            self.release(path)
        }
    }
}

extension RemoteSync {
    /// `keepSynced`: holds (or lets go of) a use of the query's listen (its location's for a query
    /// that filters nothing), once per query.
    func setKeepSynced(_ keep: Bool, at path: DatabasePath, params: QueryParams) {
        let key = "\(path.string)\u{0}\(params)"
        if keep, !self.keptSynced.contains(key) {
            self.keptSynced.insert(key)
            if params.isFiltered {
                self.acquire(QueryKey(path: path, params: params)) { _ in }
            } else {
                self.acquire(path) { _ in }
            }
        } else if !keep, self.keptSynced.remove(key) != nil {
            if params.isFiltered {
                self.release(QueryKey(path: path, params: params))
            } else {
                self.release(path)
            }
        }
    }
}
