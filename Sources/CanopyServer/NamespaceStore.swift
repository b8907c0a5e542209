public import Canopy
import CanopyCluster
import CanopyCore
import Foundation
import HTTPTypes
import NIOCore
import NIOPosix
import Synchronization

/// The databases a server serves, one per namespace (`?ns=NAME`), each opened on first use.
///
/// With a directory, namespace `NAME` is the durable database in `DIRECTORY/NAME` (and its
/// rules in `DIRECTORY/NAME.rules.json`); without one, every namespace lives in memory.
public final class NamespaceStore: Sendable {
    private let directory: String?
    let configuration: Database.Configuration
    private let entries = Mutex<[String: EventLoopFuture<Namespace>]>([:])
    /// The namespaces already open: the fast path of every request.
    private let open = Mutex<[String: Namespace]>([:])
    private let closed = Atomic<Bool>(false)
    /// The most namespaces open at once.
    public let maxNamespaces: Int
    /// What namespaces opened from now on start with (set by the server that serves them).
    private let rulesSetup = Mutex(RulesSetup())
    /// What runs on every namespace's database as it opens (``onDatabaseOpen(_:)``).
    private let openHooks = Mutex<[@Sendable (String, Database) throws -> Void]>([])
    /// What runs when a namespace stops being served here (``evict(_:reason:)``).
    private let evictionHookList = Mutex<[@Sendable (String) -> Void]>([])
    /// The cluster this server is a node of, if any: its namespaces live in the cluster's
    /// PostgreSQL, and those another node leads are redirected there.
    public let cluster: ClusterMembership?

    /// - Parameters:
    ///   - directory: Where the databases live; `nil` keeps them in memory.
    ///   - configuration: How each database is opened (sync policy, clock, …).
    ///   - maxNamespaces: The most namespaces served at once. Each is a database with its own
    ///     threads, and any client may name a new one (`?ns=`), so past this a request for one
    ///     more gets 403 instead of costing the server another database.
    ///   - cluster: The cluster this server is a node of: namespaces then live in the cluster's
    ///     PostgreSQL (`directory` is not used), and `maxNamespaces` bounds those this node leads.
    public init(
        directory: String?, configuration: Database.Configuration = Database.Configuration(), maxNamespaces: Int = 100,
        cluster: ClusterMembership? = nil
    ) {
        self.directory = cluster == nil ? directory : nil
        self.configuration = configuration
        self.maxNamespaces = max(1, maxNamespaces)
        self.cluster = cluster
    }

    /// A namespace name: 1 to 63 ASCII letters, digits, `-` or `_`.
    public static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...63).contains(bytes.count) else { return false }
        return bytes.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D || b == 0x5F
        }
    }

    /// The database of namespace `name`, opened (and created) if needed.
    ///
    /// - Complexity: O(1) for an open namespace. The first request opens its database off the event loops, as
    ///   `Database(path:)`: O(*c* + *j*) for a checkpoint of *c* bytes and *j* bytes of journal after it.
    public func database(_ name: String) async throws -> Database {
        try await self.namespace(name).database
    }

    /// Runs `setUp` on the database of every namespace as it opens, before it serves any request, and
    /// at once on those already open: the place to register triggers
    /// (``Canopy/Database/onValueWritten(_:_:)``), which then fire for writes made over REST and by
    /// WebSocket (SDK) clients alike, as for writes made in-process; their own writes reach server-sent
    /// event streams and SDK listeners like any other. Call it before the server starts serving. A `setUp` that throws fails the opening (the request gets 503 and a
    /// later one tries again).
    ///
    /// ```swift
    /// store.onDatabaseOpen { namespace, db in
    ///     try db.onValueCreated("/restaurants/{restId}/ratings/{ratingId}") { event in … }
    /// }
    /// ```
    ///
    /// - Complexity: O(*k*) for *k* namespaces open now (each gets `setUp`).
    public func onDatabaseOpen(_ setUp: @escaping @Sendable (_ namespace: String, _ database: Database) throws -> Void) rethrows {
        self.openHooks.withLock { $0.append(setUp) }
        for (name, namespace) in self.open.withLock({ $0 }) { try setUp(name, namespace.database) }
    }

    /// Sets what namespaces opened from now on start with.
    func setRules(_ setup: RulesSetup) {
        self.rulesSetup.withLock { $0 = setup }
    }

    /// Whether namespace `name` is open, or kept in the store's directory.
    func exists(_ name: String) -> Bool {
        if self.open.withLock({ $0[name] != nil }) { return true }
        guard let directory = self.directory, Self.isValidName(name) else { return false }
        return FileManager.default.fileExists(atPath: URL(fileURLWithPath: directory).appendingPathComponent(name).path)
    }

    /// The number of namespaces open now.
    var openCount: Int { self.open.withLock { $0.count } }

    /// The names of the namespaces open, being opened, or kept in the store's directory.
    /// - Complexity: O(*n*) for *n* namespaces plus the files of the directory.
    func names() -> [String] {
        var names = self.entries.withLock { Array($0.keys) }
        if let directory = self.directory, let files = try? FileManager.default.contentsOfDirectory(atPath: directory) {
            // A namespace is kept as a directory `NAME` (its rules beside it in `NAME.rules.json`).
            names += files.filter { Self.isValidName($0) }
        }
        return names
    }

    /// The namespace `name`, opened (and created) if needed; with `create` false, only an open
    /// or kept one (a guarded server lets only its administrator create namespaces). In a
    /// cluster with `--replicas`, a namespace led elsewhere is followed here unless `follow` is
    /// false (then redirected).
    func namespace(_ name: String, create: Bool = true, follow: Bool = true) async throws -> Namespace {
        if let namespace = self.open.withLock({ $0[name] }) {
            guard let cluster = self.cluster else { return namespace }
            if let binding = namespace.cluster, !cluster.stillLeads(binding.lease) {
                // Led under a registration or a lease this node no longer holds: never served stale.
                self.evict(name, reason: "Node \(binding.lease.node) no longer holds namespace \(name)'s lease.")
            } else if let binding = namespace.follower, !cluster.stillFollows(since: binding.node) {
                // Past its lease this node may have missed records: never served stale either.
                self.evict(name, reason: "Node \(binding.node) no longer holds its lease; it stops following namespace \(name).")
            } else {
                return namespace
            }
        }
        guard Self.isValidName(name) else {
            throw RESTError.badRequest("Invalid namespace \"\(name)\": use 1 to 63 letters, digits, '-' or '_'.")
        }
        // Refused like any denied request: whether it exists is not told.
        if !create && self.cluster == nil && !self.exists(name) { throw RESTError.permissionDenied }
        let opening: EventLoopFuture<Namespace> = try self.entries.withLock { entries in
            if self.closed.load(ordering: .acquiring) { throw RESTError(.serviceUnavailable, "The server is shutting down.") }
            if let opening = entries[name] { return opening }
            let rules = self.rulesSetup.withLock { $0 }
            if let cluster = self.cluster {
                // A node may lead up to `maxNamespaces`; past that, requests for a namespace led
                // elsewhere are still redirected.
                let followed = self.followedCount
                let mayLead = entries.count - followed < self.maxNamespaces
                let mayFollow = follow && self.mayFollowMore(cluster)
                let promise = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Namespace.self)
                promise.completeWithTask {
                    try await self.openClustered(name, in: cluster, create: create, mayLead: mayLead, mayFollow: mayFollow, rules: rules)
                }
                entries[name] = promise.futureResult
                return promise.futureResult
            }
            if entries.count >= self.maxNamespaces {
                throw RESTError(
                    .forbidden, "Namespace \"\(name)\" would be one more than the \(self.maxNamespaces) this server serves at once.")
            }
            let directory = self.directory
            let configuration = self.configuration
            // Opening replays a journal: keep that off the event loops (and off Swift concurrency's
            // threads, which a task waiting here must not need).
            let opening = NIOThreadPool.singleton.runIfActive(eventLoop: MultiThreadedEventLoopGroup.singleton.any()) {
                let namespace = try Namespace.open(name: name, directory: directory, configuration: configuration, rules: rules)
                try self.runOpenHooks(namespace)
                return namespace
            }
            entries[name] = opening
            return opening
        }
        do {
            let namespace = try await opening.get()
            // Evicted while it opened (its lease lost at once): the next request opens it again.
            let current = self.entries.withLock { $0[name] === opening }
            self.open.withLock { open in
                if current && !self.closed.load(ordering: .acquiring) { open[name] = namespace }
            }
            return namespace
        } catch {
            // Let a later request try again (the directory may have been fixed).
            self.entries.withLock { entries in
                if entries[name] === opening { entries[name] = nil }
            }
            if let error = error as? RESTError { throw error }
            if let error = error as? DatabaseError, self.cluster != nil {
                throw RESTError(.serviceUnavailable, "Namespace \"\(name)\" could not be served: \(error.message)")
            }
            throw RESTError(.serviceUnavailable, "The database of namespace \"\(name)\" could not be opened: \(error)")
        }
    }

    /// The namespaces open now.
    func openNamespaces() async -> [Namespace] {
        let openings = self.entries.withLock { Array($0.values) }
        var open: [Namespace] = []
        for opening in openings {
            if let namespace = try? await opening.get() { open.append(namespace) }
        }
        return open
    }

    /// Runs the ``onDatabaseOpen(_:)`` hooks on a namespace that opened; closes it when one throws.
    func runOpenHooks(_ namespace: Namespace) throws {
        do {
            for setUp in self.openHooks.withLock({ $0 }) { try setUp(namespace.name, namespace.database) }
        } catch {
            namespace.database.close()
            throw error
        }
    }

    /// Runs `hook` with a namespace's name whenever it stops being served here.
    func onEviction(_ hook: @escaping @Sendable (String) -> Void) {
        self.evictionHookList.withLock { $0.append(hook) }
    }

    var evictionHooks: [@Sendable (String) -> Void] { self.evictionHookList.withLock { $0 } }

    /// The namespaces open now (not those still opening).
    func openNamespacesNow() -> [Namespace] { self.open.withLock { Array($0.values) } }

    /// The namespaces followed here now (`--replicas`). O(*n*) for *n* open namespaces.
    var followedCount: Int { self.open.withLock { $0.values.count { $0.follower != nil } } }

    /// Whether this node may follow one more namespace (`--replicas`, below its limit).
    func mayFollowMore(_ cluster: ClusterMembership) -> Bool {
        cluster.maxReplicated.map { self.followedCount < $0 } ?? false
    }

    /// Namespace `name` if it is open now. O(1).
    func openNamespace(_ name: String) -> Namespace? { self.open.withLock { $0[name] } }

    /// Whether namespace `name` is open or opening here.
    func isServing(_ name: String) -> Bool { self.entries.withLock { $0[name] != nil } }

    /// The names of the namespaces open or opening here.
    func servingNames() -> [String] { self.entries.withLock { Array($0.keys) } }

    /// Forgets namespace `name` (the next request opens it again); returns its opening.
    func forget(_ name: String) -> EventLoopFuture<Namespace>? {
        self.open.withLock { _ = $0.removeValue(forKey: name) }
        return self.entries.withLock { $0.removeValue(forKey: name) }
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { self.closed.load(ordering: .acquiring) }

    /// Ends every stream (with a `cancel` event) and closes every database, which flushes it.
    /// Later requests get 503.
    ///
    /// - Complexity: O(*t*) for *t* open streams, plus closing each database (O(*r*) on its loop for *r*
    ///   observers, after the work already queued).
    public func close() async {
        self.open.withLock { open in
            self.closed.store(true, ordering: .releasing)
            open = [:]
        }
        for namespace in await self.openNamespaces() {
            await namespace.hub.closeAll(reason: "The database was closed.")
            namespace.database.close()
        }
    }
}
