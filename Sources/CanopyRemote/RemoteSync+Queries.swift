import Canopy
import CanopyCore
import CanopyWire
import Logging

/// Filtered queries as the server's: a query that filters (a limit or a range) is sent to the
/// server as a tagged listen, and the cache holds only its window (``RemoteQuery``).
///
/// At a query's location, the cache holds the union of the windows there (each child in a window
/// is the server's data for that child), plus what plain listens below keep; a plain listen at or
/// above the location, in use and answered, makes the windows moot. The engine runs every query
/// over what the cache holds, so its events are the embedded engine's: a window's children are
/// in the union, and any other child there is real data ranked outside the window.
extension RemoteSync {
    /// Whether a plain listen at `path` or above is in use and answered, or asked on this
    /// connection (its data comes before its answer): the server keeps the whole data there in
    /// step, and the windows below are moot.
    func isKeptComplete(_ path: DatabasePath) -> Bool {
        self.listen(covering: path) { $0.users > 0 && ($0.hasData || $0.requestID != nil) }
    }

    /// Whether a live query's window is at `path`.
    func hasLiveQuery(at path: DatabasePath) -> Bool { self.queries.values.contains { $0.isLive && $0.key.path == path } }

    /// Takes a use of the query's tagged listen (asking the server for it on first use), then
    /// calls `ready` once its data is in the cache (at once when the location is complete), or
    /// with the error when the server refuses it.
    func acquire(_ key: QueryKey, ready: @escaping (Result<Void, DatabaseError>) -> Void) {
        let query: RemoteQuery
        if let existing = self.queries[key] {
            query = existing
        } else {
            query = RemoteQuery(key: key, tag: self.nextTag)
            self.nextTag += 1
            self.queries[key] = query
            self.queryTags[query.tag] = query
        }
        query.users += 1
        if query.users == 1, self.isConnected { self.sendListen(query) }
        if query.hasData || self.isComplete(key.path) || self.pending.contains(where: { $0.completes(key.path) }) {
            ready(.success(()))
        } else {
            query.waiting.append(ready)
        }
    }

    /// Gives back a use of the query's listen; the last one stops it, and the children only its
    /// window held leave the cache.
    func release(_ key: QueryKey) {
        guard let query = self.queries[key] else { return }
        query.users -= 1
        guard query.users <= 0 else { return }
        if self.isConnected, query.requestID != nil {
            self.send({ .unlisten(id: $0, path: key.path, query: query.serverParams, tag: query.tag) }) { _ in }
        }
        query.users = 0
        query.requestID = nil
        query.isLive = false
        // A persistent cache keeps what it knows, as for a plain listen: the query shows it at once
        // (marked from the cache) when observed again, and its next window replaces it. Unless
        // another query there is in use: its window must not mix with data nothing keeps current.
        let shared = self.queries.values.contains { $0.users > 0 && $0.key.path == key.path }
        if self.cache != nil && query.hasData && !shared {
            query.hasWindow = false
            return
        }
        self.forget(query)
        self.refresh(Self.outermost(self.rederiveQueries(touching: [], including: [key.path])))
    }

    private func forget(_ query: RemoteQuery) {
        self.queries[query.key] = nil
        self.queryTags[query.tag] = nil
        if query.hasData { self.persistQueries() }
    }

    /// Asks the server for the query's tagged listen on the current connection.
    func sendListen(_ query: RemoteQuery) {
        let key = query.key
        let hash = query.hasWindow ? query.window.wireHash : ""
        let params = query.serverParams
        query.requestID = self.send({ .listen(id: $0, path: key.path, query: params, tag: query.tag, hash: hash) }) {
            [weak self, weak query] outcome in
            guard let self, let query, self.queries[key] === query else { return }
            switch outcome {
            case .ok(let answer):
                self.warnIfUnindexed(answer, key)
                let first = !query.hasData
                query.hasData = true
                if first { self.persistQueries() }
                query.isLive = true
                self.core.metadataChanged(at: key.path)
                let waiting = query.waiting
                query.waiting = []
                for ready in waiting { ready(.success(())) }
            case .failed(let status, _) where status == "permission_denied" && !query.withoutMargin && params != key.params:
                query.withoutMargin = true
                if self.isConnected { self.sendListen(query) }
            case .failed(let status, let message):
                self.queryFailed(query, error: DatabaseError(serverStatus: status, message: message, path: key.path))
            case .disconnected, .closed:
                break  // asked again on reconnect
            }
        }
    }

    /// The server refused (or revoked) the query's listen: its observers are cancelled with `error`.
    func queryFailed(_ query: RemoteQuery, error: DatabaseError) {
        guard self.queries[query.key] === query else { return }
        self.forget(query)
        let waiting = query.waiting
        query.waiting = []
        for ready in waiting { ready(.failure(error)) }
        for registration in query.registrations where registration.isActive {
            self.core.cancel(registration, error: error)
        }
        self.refresh(Self.outermost(self.rederiveQueries(touching: [], including: [query.key.path])))
    }

    /// The server revoked listens at `path`: the queries among `params`, or the plain listen when
    /// there are none.
    func listensRevoked(at path: DatabasePath, queries params: [QueryParams]) {
        let error = DatabaseError(.permissionDenied, "The server revoked the listen at \(path.string): permission_denied.")
        guard !params.isEmpty else { return self.listenFailed(at: path, error: error) }
        for query in self.queries.values where query.key.path == path && params.contains(query.serverParams) {
            self.queryFailed(query, error: error)
        }
    }

    /// A local write that gives a whole value to a query's location completes its query, as it
    /// completes a plain listen (``completedLocally(by:)``).
    func queriesCompletedLocally(by write: PendingWrite) {
        for query in self.queries.values where !query.waiting.isEmpty && write.completes(query.key.path) {
            let waiting = query.waiting
            query.waiting = []
            for ready in waiting { ready(.success(())) }
        }
    }

    /// The SDKs' warning for a query the server has no index for (`"w": ["no_index"]`).
    private func warnIfUnindexed(_ answer: Node, _ key: QueryKey) {
        var unindexed = false
        answer.child(ChildKey("w")).forEachChild { _, warning in
            if case .string("no_index")? = warning.leafValue { unindexed = true }
            return !unindexed
        }
        guard unindexed else { return }
        let spec: String
        switch key.params.index {
        case .child(let path): spec = path.map(\.string).joined(separator: "/")
        case .value: spec = ".value"
        case .key, .priority: spec = ".key"
        }
        self.logger.warning(
            "canopy: Using an unspecified index. Your data will be downloaded and filtered on the client. Consider adding \".indexOn\": \"\(spec)\" at \(key.path.string) to your security rules for better performance."
        )
    }

    // MARK: - The windows' data

    /// A tagged `d` push: the data at `path` of the window of the query with `tag`.
    func serverQueryPut(_ node: Node, at path: DatabasePath, tag: Int64) {
        guard let query = self.queryTags[tag], query.users > 0, let relative = self.relative(path, to: query) else { return }
        if relative.isEmpty {
            // The whole window: every child in it before or now may change.
            var keys = Set<ChildKey>()
            for window in [query.window, node] {
                window.forEachChild { key, _ in
                    keys.insert(key)
                    return true
                }
            }
            query.window = node.hasChildren ? node : .empty
            self.windowChanged(query, children: keys, whole: !query.hasWindow)
        } else {
            query.window.set(node, at: relative[...])
            self.windowChanged(query, children: [relative[0]], whole: !query.hasWindow)
        }
    }

    /// A tagged `m` push: children of the window of the query with `tag` changed under `path`.
    func serverQueryMerge(_ changes: [(path: [ChildKey], node: Node)], at path: DatabasePath, tag: Int64) {
        guard let query = self.queryTags[tag], query.users > 0, let relative = self.relative(path, to: query) else { return }
        var keys = Set<ChildKey>()
        for (member, node) in changes {
            let location = relative + member
            guard let first = location.first else { continue }
            query.window.set(node, at: location[...])
            keys.insert(first)
        }
        self.windowChanged(query, children: keys, whole: !query.hasWindow)
    }

    /// `path`'s keys below the query's location, or `nil` when it is not at or below it.
    private func relative(_ path: DatabasePath, to query: RemoteQuery) -> [ChildKey]? {
        guard query.key.path.contains(path) else { return nil }
        return Array(path.keys.dropFirst(query.key.path.keys.count))
    }

    /// Brings the cache at the query's location in step with its window: the changed `children`
    /// (or, for a first window, the whole location, which may hold data no listen keeps in
    /// step), then the engine.
    private func windowChanged(_ query: RemoteQuery, children: Set<ChildKey>, whole: Bool) {
        query.hasWindow = true
        let location = query.key.path
        guard !self.isKeptComplete(location) else { return }
        if whole {
            self.refresh(Self.outermost(self.rederiveQueries(touching: [], including: [location])))
            return
        }
        var changed: [DatabasePath] = []
        for key in children.sorted() {
            let child = location.appending(key)
            let node = self.windowsChild(key, at: location)
            self.serverRoot.set(node, at: child.keys[...])
            self.persistServer(node, at: child)
            changed.append(child)
        }
        self.refresh(changed)
    }

    /// The server's data for child `key` of the query location `location`: from a window there
    /// that holds it, or what listens below keep of it.
    private func windowsChild(_ key: ChildKey, at location: DatabasePath) -> Node {
        for query in self.queries.values where query.users > 0 && query.hasWindow && query.key.path == location {
            let child = query.window.child(key)
            if !child.isEmpty { return child }
        }
        return self.retained(location.appending(key))
    }

    /// What the cache should hold at `path` (under a query location that no plain listen keeps
    /// complete): the children of the windows there, and below, what the listens and windows
    /// there keep. Data no listen keeps in step is left out.
    ///
    /// - Complexity: O(*w* + *l*) for *w* children in the windows at `path` and *l* listens and
    ///   queries, at each level that has listens below.
    func retained(_ path: DatabasePath) -> Node {
        if self.isKeptComplete(path) { return self.serverRoot.node(at: path.keys) }
        var node = Node.empty
        for query in self.queries.values where query.users > 0 && query.hasWindow && query.key.path == path {
            query.window.forEachChild { key, child in
                if node.child(key).isEmpty { node.setChild(key, to: child) }
                return true
            }
        }
        var below = Set<ChildKey>()
        let depth = path.keys.count
        for (listenPath, listen) in self.listens where listen.users > 0 && listenPath.keys.count > depth && path.contains(listenPath) {
            below.insert(listenPath.keys[depth])
        }
        for query in self.queries.values where query.users > 0 && query.key.path.keys.count > depth && path.contains(query.key.path) {
            below.insert(query.key.path.keys[depth])
        }
        for key in below.sorted() where node.child(key).isEmpty {
            let child = self.retained(path.appending(key))
            if !child.isEmpty { node.setChild(key, to: child) }
        }
        return node
    }

    /// After the cache changed at `locations` outside the windows (a plain listen's data, a
    /// one-shot read, an acknowledged write, a listen or query gone): re-derives it at the
    /// locations of the queries at or below them, and at the children of query locations above
    /// them, where no plain listen keeps the data complete; also at `including`. Returns the
    /// locations it re-derived, for ``refresh(_:)``.
    func rederiveQueries(touching locations: [DatabasePath], including: [DatabasePath] = []) -> [DatabasePath] {
        guard !self.queries.isEmpty || !including.isEmpty else { return [] }
        var wholes = Set(including)
        var children = Set<DatabasePath>()
        for query in self.queries.values where query.users > 0 {
            let path = query.key.path
            for location in locations {
                if location.contains(path) {
                    wholes.insert(path)
                } else if path.contains(location) {
                    children.insert(path.appending(location.keys[path.keys.count]))
                }
            }
        }
        var changed: [DatabasePath] = []
        for target in wholes.union(children).sorted() where !self.isKeptComplete(target) {
            let node: Node
            if wholes.contains(target) {
                node = self.retained(target)
            } else {
                node = self.windowsChild(target.keys[target.keys.count - 1], at: DatabasePath(Array(target.keys.dropLast())))
            }
            self.serverRoot.set(node, at: target.keys[...])
            self.persistServer(node, at: target)
            changed.append(target)
        }
        return changed
    }
}
