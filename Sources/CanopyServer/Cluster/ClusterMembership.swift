public import CanopyCluster
import CanopyConnection
public import CanopyCore
import Foundation
public import Logging
import Synchronization

/// This server as a node of a cluster (`canopy serve --cluster`): its registration in the
/// cluster's PostgreSQL, its heartbeats, and where each namespace is served (the DocC article
/// *Cluster*).
public final class ClusterMembership: Sendable {
    /// Where a namespace is served.
    enum Route: Equatable {
        /// Here: this node took (or kept) the lead, at this lease.
        case lead(NamespaceLease)
        /// At another live node: how clients reach it (its `--advertise`).
        case redirect(String)
        /// Here as a follower (`--replicas`) of the live node that leads it, at this address.
        case follow(String)
    }

    public let store: ClusterStore
    /// How clients reach this node (`http://HOST:PORT`).
    public let advertise: String
    let version: String
    let logger: Logger
    /// What nodes present to each other (``ClusterStore/nodeSecret()``).
    let secret: String
    /// With `--replicas`: the most namespaces this node follows; `nil` without.
    public let maxReplicated: Int?
    /// How this node reaches the others (writes forwarded to their leaders).
    let nodeClient = HTTPClient(userAgent: "canopy-node", connectTimeout: .seconds(5))
    private let node: Mutex<ClusterNode>

    private init(store: ClusterStore, node: ClusterNode, secret: String, maxReplicated: Int?, version: String, logger: Logger) {
        self.store = store
        self.advertise = node.advertise
        self.version = version
        self.logger = logger
        self.secret = secret
        self.maxReplicated = maxReplicated
        self.node = Mutex(node)
    }

    /// Connects to the cluster's PostgreSQL (creating its tables on first use) and registers this
    /// node, advertised at `advertise`. With `maxReplicated`, the node follows up to that many
    /// namespaces led elsewhere (`--replicas`) instead of redirecting their clients.
    ///
    /// - Throws: `.clusterUnavailable` when PostgreSQL cannot be reached or refuses the
    ///   credentials; `.inUse` when a live node already advertises `advertise`.
    public static func join(
        _ configuration: ClusterConfiguration, advertise: String, maxReplicated: Int? = nil, version: String, logger: Logger
    ) async throws(DatabaseError) -> ClusterMembership {
        let store = try await ClusterStore.connect(configuration, logger: logger)
        do throws(DatabaseError) {
            let secret = try await store.nodeSecret()
            let node = try await store.register(advertise: advertise, version: version)
            return ClusterMembership(
                store: store, node: node, secret: secret, maxReplicated: maxReplicated, version: version, logger: logger)
        } catch {
            await store.close()
            throw error
        }
    }

    /// The node's registration now (a node judged dead registers again under a new id).
    public var currentNode: ClusterNode { self.node.withLock { $0 } }

    /// Whether this node may still serve a namespace it took under `lease`: it took it under its
    /// current registration, and its lease runs by its own clock (which ends no later than the
    /// one other nodes judge it by). O(1): checked on every request for the namespace.
    func stillLeads(_ lease: NamespaceLease) -> Bool {
        let node = self.currentNode
        return lease.node == node.id && node.holdsLease && !node.sessionEnded
    }

    /// Whether this node may still serve a namespace it follows since it registered as `node`:
    /// its registration and lease hold (past its lease it may have missed the log). O(1).
    func stillFollows(since node: Int32) -> Bool {
        let current = self.currentNode
        return current.id == node && current.holdsLease && !current.sessionEnded
    }

    /// The leader's address when another live node leads `name`; `nil` when this node leads it
    /// or no live node does (the next request here takes it).
    func leaderElsewhere(of name: String) async throws(DatabaseError) -> String? {
        let node = self.currentNode
        guard let leader = try await self.store.leader(of: name), leader.alive, leader.node != node.id else { return nil }
        return leader.advertise
    }

    /// Where namespace `name` is served: at its live leader (here as its follower when
    /// `mayFollow`), or here, this node taking the lead when no live node has it and `mayLead`.
    ///
    /// - Throws: `.clusterUnavailable` when this node's own lease has run out, or when it may lead
    ///   no more namespaces (`--max-led-namespaces`) and no live node leads `name`.
    func route(_ name: String, mayLead: Bool, mayFollow: Bool = false) async throws(DatabaseError) -> Route {
        if let leader = try await self.leaderElsewhere(of: name) { return mayFollow ? .follow(leader) : .redirect(leader) }
        guard mayLead else {
            throw DatabaseError(
                .clusterUnavailable, "Namespace \(name) has no leader and this node leads as many namespaces as it may; try another node.")
        }
        let node = self.currentNode
        guard node.holdsLease && !node.sessionEnded else {
            throw DatabaseError(.clusterUnavailable, "This node's lease in the cluster has run out; it leads nothing until it renews it.")
        }
        if let lease = try await self.store.acquire(name, by: node) { return .lead(lease) }
        // Another node took it in between.
        if let leader = try await self.leaderElsewhere(of: name) { return mayFollow ? .follow(leader) : .redirect(leader) }
        throw DatabaseError(.clusterUnavailable, "Namespace \(name) changed hands while this node took it; try again.")
    }

    /// Renews the node's lease every third of it until the task is cancelled. When the lease runs
    /// out (PostgreSQL unreachable for a whole lease), the node's session ended (PostgreSQL
    /// restarted: its lock is gone) or the cluster judged the node dead, `lost` runs (the node
    /// must stop serving what it led) and the node registers again, retrying until PostgreSQL
    /// answers.
    ///
    /// After each heartbeat, `leases()` (the leases of the namespaces served here) are checked
    /// against PostgreSQL, and `superseded` runs with those whose epoch moved on (a
    /// `canopy cluster move`): the node stops serving them.
    ///
    /// `beat` runs after each successful heartbeat (followers catch up and report, leaders run
    /// the onDisconnect writes of followers that died).
    func keepAlive(
        leases: @escaping @Sendable () -> [NamespaceLease] = { [] }, superseded: @escaping @Sendable ([NamespaceLease]) -> Void = { _ in },
        beat: @escaping @Sendable (ClusterNode) async -> Void = { _ in }, lost: @escaping @Sendable (String) async -> Void
    ) async {
        let interval = self.store.configuration.lease / 3
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            if Task.isCancelled { return }
            let node = self.currentNode
            do throws(DatabaseError) {
                try await node.heartbeat()
                let moved = try await self.store.superseded(leases())
                if !moved.isEmpty { superseded(moved) }
                await beat(node)
            } catch {
                self.logger.warning("The heartbeat of node \(node.id) failed: \(error.message)")
                guard error.code == .notLeader || node.sessionEnded || !node.holdsLease else { continue }
                await lost("Node \(node.id) lost its place in the cluster: \(error.message)")
                await self.registerAgain(replacing: node)
                // What opened meanwhile was taken under the old registration.
                await lost("Node \(node.id) registered again as node \(self.currentNode.id).")
            }
        }
    }

    private func registerAgain(replacing old: ClusterNode) async {
        await old.leave()
        while !Task.isCancelled {
            do throws(DatabaseError) {
                let node = try await self.store.register(advertise: self.advertise, version: self.version)
                self.node.withLock { $0 = node }
                self.logger.notice("Registered again as node \(node.id) (\(node.advertise)).")
                return
            } catch {
                self.logger.error("Registering again failed: \(error.message)")
                try? await Task.sleep(for: self.store.configuration.lease / 3)
            }
        }
    }

    /// Leaves the cluster (the namespaces led here have no leader until another node takes
    /// them) and closes the connections to PostgreSQL.
    public func leave() async {
        self.nodeClient.close()
        await self.currentNode.leave()
        await self.store.close()
    }

    /// `HOST:PORT` of an advertised URL: what the SDKs' redirect message names.
    static func hostAndPort(of advertise: String) -> String {
        var rest = Substring(advertise)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        return String(rest.prefix { $0 != "/" })
    }

    /// The host (without an IPv6 address's brackets) and port of an advertised URL (port 80
    /// when it names none).
    static func endpoint(of advertise: String) -> (host: String, port: Int) {
        let authority = Self.hostAndPort(of: advertise)
        var host = Substring(authority)
        var port = 80
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]"),
            let number = Int(authority[authority.index(after: colon)...])
        {
            host = authority[..<colon]
            port = number
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        return (String(host), port)
    }
}
