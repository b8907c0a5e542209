import Canopy
import CanopyCore
import CanopyWire
import NIOCore

/// The WebSocket listens of one namespace and what feeds them, on the database's loop thread.
///
/// A default listen (a location's whole data) follows every write through one change follower
/// for the hub; a write reaches only the listened locations on its paths (a ``LocationTrie``),
/// and its push is rendered once per location, whatever the number of connections. A tagged
/// listen (a filtered query) follows the engine's view of that query, shared by every connection
/// with the same query: each change of the window is rendered once, with each connection's tag
/// appended.
// @unchecked Sendable: every mutable property is touched only on the database's loop thread
// (checked in debug builds).
final class WireHub: @unchecked Sendable {
    /// The connections with a default listen on one location.
    private final class LocationListens {
        var sessions: [UInt64: WireSession] = [:]
    }

    /// The connections listening to one filtered query, with their tags, and its engine listener.
    private final class QueryListens {
        var tags: [Subscriber: WireSession] = [:]
        var listener: ViewListener?
    }

    private struct Subscriber: Hashable {
        var session: UInt64
        var tag: Int64
    }

    private struct QueryKey: Hashable {
        var location: DatabasePath
        var params: QueryParams
    }

    /// One listen of one connection, as it names it in `q` and `n`.
    private struct Listen: Hashable {
        var location: DatabasePath
        var query: QueryParams?
        var tag: Int64?
    }

    /// Weak: the database's change followers hold the hub.
    private weak let database: Database?
    private var locations = LocationTrie<LocationListens>()
    private var queries: [QueryKey: QueryListens] = [:]
    private var listens: [UInt64: Set<Listen>] = [:]
    /// The connections with listens, by id.
    private var sessions: [UInt64: WireSession] = [:]
    private var subscription: ChangeSubscription?
    /// The initial data of default listens, shared by those on one location until the next write.
    private var renderings = Renderings()

    init(database: Database) {
        self.database = database
    }

    private func assertOnLoop(file: StaticString = #fileID, line: UInt = #line) {
        self.database?.assertOnLoop("WireHub is used on its database's loop thread only", file: file, line: line)
    }

    /// Starts a listen of `session` and queues its initial data (loop thread). A query without a
    /// tag, or a tag on a query that filters nothing, is served as the location's whole data.
    /// Returns `false`, starting nothing, when the initial data is longer than `limit` bytes.
    func listen(_ session: WireSession, at location: DatabasePath, query: QueryParams?, tag: Int64?, limit: Int, access: LoopAccess)
        -> Bool
    {
        self.assertOnLoop()
        let listen = Listen(location: location, query: query, tag: tag)
        // Rendered once, queued as it is: the outbox writes a long one as the client reads it.
        let data = self.initialData(listen, access: access)
        guard data.bytes.count <= limit else { return false }
        self.sessions[session.id] = session
        guard self.listens[session.id, default: []].insert(listen).inserted else {
            // The same listen again: send its data again, as a fresh listen would.
            session.outbox.send(data)
            return true
        }
        if let tag, let params = query, params.isFiltered {
            let key = QueryKey(location: location, params: params)
            let group: QueryListens
            if let existing = self.queries[key] {
                group = existing
            } else {
                group = QueryListens()
                let (listener, _) = access.listen(at: location, params: params) { [unowned self, unowned group] change in
                    self.windowChanged(change, group)
                }
                group.listener = listener
                self.queries[key] = group
            }
            group.tags[Subscriber(session: session.id, tag: tag)] = session
        } else {
            let group = self.locations[location] ?? LocationListens()
            if group.sessions.isEmpty { self.locations.set(group, at: location) }
            group.sessions[session.id] = session
            if self.subscription == nil {
                self.subscription = access.followChanges { [unowned self] write, root in self.changed(write, root: root) }
            }
        }
        session.outbox.send(data)
        return true
    }

    private func initialData(_ listen: Listen, access: LoopAccess) -> Rendering {
        if let tag = listen.tag, let params = listen.query, params.isFiltered {
            let window = access.queryResult(at: listen.location, params: params)
            return Rendering(ServerMessage.put(path: listen.location, tag: tag) { WireJSON.append(window, to: &$0) })
        }
        // Valid until the next write: the hub follows every write while it has default listens,
        // and forgets them when it stops following.
        if self.subscription == nil { self.renderings.removeAll() }
        return self.renderings.rendering(at: listen.location) {
            ServerMessage.put(path: listen.location) { WireJSON.append(access.node(at: listen.location), to: &$0) }
        }
    }

    /// Ends one listen of `session` (loop thread); a listen it does not have is ignored.
    func unlisten(_ session: WireSession, at location: DatabasePath, query: QueryParams?, tag: Int64?, access: LoopAccess) {
        self.assertOnLoop()
        let listen = Listen(location: location, query: query, tag: tag)
        guard self.listens[session.id]?.remove(listen) != nil else { return }
        self.drop(listen, of: session.id, access: access)
        if self.listens[session.id]?.isEmpty == true {
            self.listens[session.id] = nil
            self.sessions[session.id] = nil
        }
    }

    /// Revokes the listens `denied` says may no longer read, with a `c` to their connections
    /// (loop thread): new rules, or a connection's new identity, took their access away.
    /// `denied` gets the connection, the location, and the query the rules judge (a filtered
    /// query's, `nil` for the location's whole data).
    /// - Complexity: O(*l*) for *l* listens, plus the rule evaluations of `denied`.
    func revoke(access: LoopAccess, where denied: (WireSession, DatabasePath, QueryParams?) -> Bool) {
        self.assertOnLoop()
        for session in Array(self.sessions.values) {
            self.revoke(of: session, access: access) { denied(session, $0, $1) }
        }
    }

    /// ``revoke(access:where:)`` for the listens of one connection.
    /// - Complexity: O(*l*) for its *l* listens, plus the rule evaluations of `denied`.
    func revoke(of session: WireSession, access: LoopAccess, where denied: (DatabasePath, QueryParams?) -> Bool) {
        self.assertOnLoop()
        guard let listens = self.listens[session.id] else { return }
        for listen in listens {
            let query = listen.tag != nil && listen.query?.isFiltered == true ? listen.query : nil
            guard denied(listen.location, query) else { continue }
            self.listens[session.id]?.remove(listen)
            self.drop(listen, of: session.id, access: access)
            session.outbox.send(ServerMessage.revoke(path: listen.location, query: query))
        }
        if self.listens[session.id]?.isEmpty == true {
            self.listens[session.id] = nil
            self.sessions[session.id] = nil
        }
    }

    /// Ends every listen of `session` (loop thread), when its connection closes.
    func removeAll(_ session: WireSession, access: LoopAccess) {
        self.assertOnLoop()
        self.sessions[session.id] = nil
        guard let listens = self.listens.removeValue(forKey: session.id) else { return }
        for listen in listens { self.drop(listen, of: session.id, access: access) }
    }

    /// The number of listens of every connection (loop thread).
    var listenCount: Int { self.listens.values.reduce(0) { $0 + $1.count } }

    private func drop(_ listen: Listen, of session: UInt64, access: LoopAccess) {
        if let tag = listen.tag, let params = listen.query, params.isFiltered {
            let key = QueryKey(location: listen.location, params: params)
            guard let group = self.queries[key] else { return }
            group.tags[Subscriber(session: session, tag: tag)] = nil
            if group.tags.isEmpty {
                self.queries[key] = nil
                if let listener = group.listener { access.stopListening(listener) }
            }
            return
        }
        // One connection may hold several default listens on one location (with and without a
        // query that filters nothing): keep it while any remains.
        if self.listens[session]?.contains(where: { $0.location == listen.location && !($0.tag != nil && $0.query?.isFiltered == true) })
            == true
        {
            return
        }
        guard let group = self.locations[listen.location] else { return }
        group.sessions[session] = nil
        if group.sessions.isEmpty {
            self.locations.set(nil, at: listen.location)
            if self.locations.count == 0 {
                self.subscription?.cancel()
                self.subscription = nil
            }
        }
    }

    /// Loop thread: after every write, for the default listens on the locations it touched.
    private func changed(_ write: WriteOperation, root: Node) {
        self.assertOnLoop()
        self.renderings.removeAll()
        self.locations.forEachTouched(by: write.path, entries: write.entries.map(\.path)) { location, group in
            guard let change = write.change(at: location, root: root, priorities: true) else { return }
            let frame = ByteBuffer(bytes: WireJSON.push(change, at: location, tag: nil))
            for session in group.sessions.values { session.outbox.send(frame: frame) }
        }
    }

    /// Loop thread: after a write that changed a query's window.
    private func windowChanged(_ change: ViewChange, _ group: QueryListens) {
        self.assertOnLoop()
        guard let push = change.locationChange else { return }
        // The message without its closing `}}}`, then each connection's tag.
        var body = WireJSON.push(push, at: change.listener.path, tag: nil)
        body.removeLast(3)
        for (subscriber, session) in group.tags {
            var message = body
            message += #","t":"#.utf8
            JSONWriter.appendInt(subscriber.tag, to: &message)
            message += "}}}".utf8
            session.outbox.send(message, push: true)
        }
    }
}
