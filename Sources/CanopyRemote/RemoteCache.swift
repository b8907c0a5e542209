import Canopy
import CanopyCore
import CanopyLoop
import CanopyStorage
import CanopyWire
import Logging

/// A remote database's durable cache (`Configuration.persistencePath`), kept in Canopy's own
/// storage as one tree: `s` mirrors the server's data as last known, `q` the queue of
/// unacknowledged writes (by id), `l` the locations whose data is complete, `t` the queries whose
/// windows it holds (`p` the location, `q` the query as the wire protocol spells it). Loop thread
/// only.
final class RemoteCache {
    let store: DurableStore
    /// The persisted tree (checkpoints write it).
    var root: Node

    init(store: DurableStore) {
        self.store = store
        self.root = store.openedRoot
        store.openedRoot = .empty
        store.currentRoot = { [unowned self] in self.root }
    }

    static let server = ChildKey("s")
    static let queue = ChildKey("q")
    static let listens = ChildKey("l")
    static let queries = ChildKey("t")

    /// Applies `write` to the persisted tree and journals it.
    func record(_ write: WriteOperation) {
        for entry in write.entries { self.root.set(entry.value.node, at: (write.path.keys + entry.path)[...]) }
        self.store.record(write, now: 0, completion: nil)
    }

    func close() {
        self.store.close()
        self.store.releaseLock()
    }

    // MARK: - Writes as data

    /// A queued write as a node: `p` its location, `h` its hash, `x` whether it needs existing
    /// data, `e` its entries (`k` relative path, `v` value, `r` locally resolved value, `s` server
    /// values: `k` path, `t` "timestamp" or the increment, `y` whether a priority).
    static func node(of write: PendingWrite) -> Node {
        var node = Node.empty
        node.setChild(ChildKey("p"), to: .leaf(.string(write.write.path.string)))
        if let hash = write.hash { node.setChild(ChildKey("h"), to: .leaf(.string(hash))) }
        var reads = Node.empty
        for (i, read) in write.readHashes.enumerated() {
            var r = Node.empty
            r.setChild(ChildKey("p"), to: .leaf(.string(read.path.string)))
            r.setChild(ChildKey("h"), to: .leaf(.string(read.hash)))
            reads.setChild(Self.indexKey(i), to: r)
        }
        node.setChild(ChildKey("hs"), to: reads)
        if write.write.requiresExistingNode { node.setChild(ChildKey("x"), to: .leaf(.bool(true))) }
        var entries = Node.empty
        for (i, entry) in write.write.entries.enumerated() {
            var e = Node.empty
            e.setChild(ChildKey("k"), to: .leaf(.string(entry.path.map(\.string).joined(separator: "/"))))
            e.setChild(ChildKey("v"), to: entry.value.node)
            e.setChild(ChildKey("r"), to: write.resolved[i].node)
            var servers = Node.empty
            for (j, p) in entry.value.placeholders.enumerated() {
                var s = Node.empty
                s.setChild(ChildKey("k"), to: .leaf(.string(p.path.map(\.string).joined(separator: "/"))))
                switch p.value {
                case .timestamp: s.setChild(ChildKey("t"), to: .leaf(.string("timestamp")))
                case .increment(let delta): s.setChild(ChildKey("t"), to: .leaf(delta))
                }
                if p.isPriority { s.setChild(ChildKey("y"), to: .leaf(.bool(true))) }
                servers.setChild(Self.indexKey(j), to: s)
            }
            e.setChild(ChildKey("s"), to: servers)
            entries.setChild(Self.indexKey(i), to: e)
        }
        node.setChild(ChildKey("e"), to: entries)
        return node
    }

    /// The write `node(of:)` stored, or `nil` when it is not one (it is then dropped).
    static func write(id: UInt64, from node: Node) -> PendingWrite? {
        guard case .string(let pathText)? = node.child(ChildKey("p")).leafValue,
            let path = try? DatabasePath(validating: pathText, function: "cache")
        else { return nil }
        var entries: [WriteOperation.Entry] = []
        var resolved: [(path: [ChildKey], node: Node)] = []
        var ok = true
        node.child(ChildKey("e")).forEachChild { _, e in
            guard case .string(let keysText)? = e.child(ChildKey("k")).leafValue else {
                ok = false
                return false
            }
            let keys = Self.keys(keysText)
            var placeholders: [WriteValue.Placeholder] = []
            e.child(ChildKey("s")).forEachChild { _, s in
                guard case .string(let k)? = s.child(ChildKey("k")).leafValue, let t = s.child(ChildKey("t")).leafValue else {
                    ok = false
                    return false
                }
                let value: ServerValuePlaceholder = t == .string("timestamp") ? .timestamp : .increment(t)
                placeholders.append(.init(path: Self.keys(k), value: value, isPriority: s.child(ChildKey("y")).leafValue == .bool(true)))
                return true
            }
            entries.append(.init(path: keys, value: WriteValue(node: e.child(ChildKey("v")), placeholders: placeholders)))
            resolved.append((keys, e.child(ChildKey("r"))))
            return ok
        }
        guard ok, !entries.isEmpty else { return nil }
        let write = WriteOperation(path: path, entries: entries, requiresExistingNode: node.child(ChildKey("x")).leafValue == .bool(true))
        var hash: String?
        if case .string(let h)? = node.child(ChildKey("h")).leafValue { hash = h }
        let pending = PendingWrite(id: id, write: write, resolved: resolved, hash: hash, completion: nil)
        node.child(ChildKey("hs")).forEachChild { _, r in
            if case .string(let text)? = r.child(ChildKey("p")).leafValue, case .string(let h)? = r.child(ChildKey("h")).leafValue,
                let path = try? DatabasePath(validating: text, function: "cache")
            {
                pending.readHashes.append((path, h))
            } else {
                ok = false
            }
            return ok
        }
        return ok ? pending : nil
    }

    /// Keys sort as numbers when they are zero-padded to the same width.
    static func indexKey(_ n: Int) -> ChildKey { ChildKey(String(repeating: "0", count: max(0, 6 - String(n).count)) + String(n)) }

    static func queueKey(_ id: UInt64) -> ChildKey { ChildKey(String(repeating: "0", count: max(0, 19 - String(id).count)) + String(id)) }

    private static func keys(_ text: String) -> [ChildKey] {
        text.split(separator: "/").map { ChildKey(String($0)) }
    }
}

extension RemoteSync {
    /// Opens the persistent cache, if configured, and loads it: the server's data, the queued
    /// writes (to send again), the locations known complete. Before the loop runs any job.
    func openPersistence() throws(DatabaseError) {
        guard let directory = self.options.persistencePath else { return }
        var configuration = Database.Configuration()
        configuration.syncPolicy = self.options.syncPolicy
        configuration.logger = self.logger
        let store = try DurableStore.open(
            directory: directory, loop: StoreLoopAdapter(loop: self.core.loop),
            options: configuration.storeOptions(journalClock: SystemJournalClock()))
        let cache = RemoteCache(store: store)
        self.cache = cache
        self.serverRoot = cache.root.child(RemoteCache.server)
        cache.root.child(RemoteCache.queue).forEachChild { key, node in
            if let id = UInt64(key.string), let write = RemoteCache.write(id: id, from: node) {
                self.pending.append(write)
                self.nextWriteID = max(self.nextWriteID, id + 1)
            } else {
                self.logger.warning("canopy: dropped an unreadable queued write \(key.string) from the cache")
            }
            return true
        }
        cache.root.child(RemoteCache.queries).forEachChild { _, node in
            guard case .string(let text)? = node.child(ChildKey("p")).leafValue,
                let path = try? DatabasePath(validating: text, function: "cache"),
                case .string(let spelled)? = node.child(ChildKey("q")).leafValue,
                let params = try? Self.queryParams(spelled), params.isFiltered
            else { return true }
            // Answered before: an observer of it starts at once from the cache, and the server's
            // window replaces the cached one.
            let query = RemoteQuery(key: QueryKey(path: path, params: params), tag: self.nextTag)
            self.nextTag += 1
            query.hasData = true
            self.queries[query.key] = query
            self.queryTags[query.tag] = query
            return true
        }
        cache.root.child(RemoteCache.listens).forEachChild { _, node in
            if case .string(let text)? = node.leafValue, let path = try? DatabasePath(validating: text, function: "cache") {
                let listen = RemoteListen()
                listen.hasData = true
                self.listens[path] = listen
            }
            return true
        }
    }

    /// Records which queries' windows the cache holds (after a query's first answer, or when one
    /// goes away).
    func persistQueries() {
        guard let cache = self.cache else { return }
        var node = Node.empty
        let answered = self.queries.values.filter(\.hasData).sorted { ($0.key.path, $0.tag) < ($1.key.path, $1.tag) }
        for (i, query) in answered.enumerated() {
            var entry = Node.empty
            entry.setChild(ChildKey("p"), to: .leaf(.string(query.key.path.string)))
            let params = String(decoding: JSONWriter.bytes(WireQuery.object(query.key.params)), as: UTF8.self)
            entry.setChild(ChildKey("q"), to: .leaf(.string(params)))
            node.setChild(RemoteCache.indexKey(i), to: entry)
        }
        cache.record(.set(DatabasePath([RemoteCache.queries]), WriteValue(node: node)))
    }

    /// A query as ``persistQueries()`` spelled it.
    private static func queryParams(_ text: String) throws -> QueryParams {
        var builder = JSONValueBuilder()
        return try WireQuery.params(try JSONParser().parse(text, into: &builder))
    }

    /// What the app sees when the database opens: the cached server data with the queued writes on top.
    func restoreCache() {
        guard self.cache != nil else { return }
        var root = self.serverRoot
        for write in self.pending { write.apply(to: &root) }
        self.core.applyLocally(.set(.root, WriteValue(node: root)), now: self.serverNow) { _ in }
        for write in self.pending { self.core.pendingWritesBegan(write) }
    }

    func persistQueued(_ write: PendingWrite) {
        self.cache?.record(
            .set(DatabasePath([RemoteCache.queue, RemoteCache.queueKey(write.id)]), WriteValue(node: RemoteCache.node(of: write))))
    }

    func unpersistQueued(_ write: PendingWrite) {
        self.cache?.record(.set(DatabasePath([RemoteCache.queue, RemoteCache.queueKey(write.id)]), WriteValue(node: .empty)))
    }

    func persistServer(_ node: Node, at path: DatabasePath) {
        self.cache?.record(.set(DatabasePath([RemoteCache.server] + path.keys), WriteValue(node: node)))
    }

    /// Records which locations are complete (after a listen's first answer, or when one goes away).
    func persistListens() {
        guard let cache = self.cache else { return }
        var node = Node.empty
        for (i, path) in self.listens.filter({ $0.value.hasData }).keys.sorted(by: <).enumerated() {
            node.setChild(RemoteCache.indexKey(i), to: .leaf(.string(path.string)))
        }
        cache.record(.set(DatabasePath([RemoteCache.listens]), WriteValue(node: node)))
    }
}
