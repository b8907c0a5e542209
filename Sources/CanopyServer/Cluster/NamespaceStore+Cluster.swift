import Canopy
import CanopyCluster
import CanopyCore
import CanopyStorage
import Logging
import NIOCore
import Synchronization

/// Where ``ClusterJournal/opener(store:lease:start:options:created:onBroken:)`` leaves the journal it creates.
private final class JournalSlot: Sendable {
    private let journal = Mutex<ClusterJournal?>(nil)
    func set(_ journal: ClusterJournal) { self.journal.withLock { $0 = journal } }
    var value: ClusterJournal? { self.journal.withLock { $0 } }
}

extension NamespaceStore {
    /// Opens namespace `name` in cluster mode: redirects to its live leader, or takes the lead
    /// (when `mayLead`), loads the namespace from the cluster's checkpoint and log, and serves it
    /// with the log as its journal.
    ///
    /// - Throws: ``RESTError`` `307` naming the leader; `403` when `create` is false and the
    ///   namespace does not exist; `503` when the cluster cannot be reached or the load fails.
    func openClustered(
        _ name: String, in cluster: ClusterMembership, create: Bool, mayLead: Bool, mayFollow: Bool, rules setup: RulesSetup
    ) async throws -> Namespace {
        var route: ClusterMembership.Route?
        do throws(DatabaseError) {
            let exists = create ? true : try await cluster.store.exists(name)
            if exists { route = try await cluster.route(name, mayLead: mayLead, mayFollow: mayFollow) }
        } catch {
            throw RESTError(error)
        }
        let lease: NamespaceLease
        switch route {
        // Refused like any denied request: whether it exists is not told.
        case nil: throw RESTError.permissionDenied
        case .redirect(let base): throw RESTError.redirect(name, to: base)
        case .follow(let leader): return try await self.openFollowing(name, in: cluster, leader: leader, rules: setup)
        case .lead(let taken): lease = taken
        }
        let namespace: Namespace
        let binding: ClusterBinding
        do throws(DatabaseError) {
            let start = try await cluster.store.load(name)
            let rules: NamespaceRules
            if let initial = setup.initial {
                rules = initial
                try await cluster.store.setRules(initial.source, under: lease)
            } else if let saved = try await cluster.store.rules(of: name) {
                // Saved rules were valid when set; damaged ones lock the namespace rather than open it.
                rules = (try? NamespaceRules(source: saved)) ?? .locked
            } else {
                rules = NamespaceRules.defaults(guarded: setup.guarded)
            }
            var options = self.configuration.storeOptions(journalClock: SystemJournalClock())
            // The log a new leader replays is bounded by this: a shorter threshold than a local
            // journal's keeps failover short.
            options.checkpointThreshold = min(options.checkpointThreshold, Self.clusterCheckpointThreshold)
            let journal = JournalSlot()
            let open = ClusterJournal.opener(
                store: cluster.store, lease: lease, start: start, options: options, created: { journal.set($0) }
            ) { [weak self] error in
                self?.evict(name, reason: "This node no longer leads namespace \(name): \(error.message)")
            }
            let database = try Database(configuration: self.configuration, path: nil) { loop throws(DatabaseError) in open(loop) }
            guard let created = journal.value else { throw DatabaseError(.closed, "Namespace \(name) did not open its log.") }
            binding = ClusterBinding(store: cluster.store, lease: lease, journal: created)
            namespace = Namespace.clustered(name: name, database: database, rules: rules, cluster: binding)
            cluster.logger.notice("Leading namespace \(name) at epoch \(lease.epoch) from record \(start.lastSequence).")
        } catch {
            throw RESTError(error)
        }
        try self.runOpenHooks(namespace)
        let logger = cluster.logger
        await binding.runOrphanedOnDisconnect(on: namespace, node: lease.node, includingOwn: true) { logger.warning("\($0)") }
        return namespace
    }

    /// The most log, in bytes, a namespace keeps after its checkpoint in a cluster (16 MB).
    static let clusterCheckpointThreshold = 16 << 20

    /// The leader's base URL when another live node leads `name` and the namespace is not
    /// served here, nor may be followed here (what an SDK connection is redirected to before its
    /// hello); `nil` otherwise.
    func redirection(for name: String) async -> String? {
        guard let cluster = self.cluster, !self.isServing(name), !self.mayFollowMore(cluster) else { return nil }
        return try? await cluster.leaderElsewhere(of: name)
    }

    /// Stops serving namespace `name` here (its lease was lost): its subscribers are told
    /// `reason`, its SDK connections closed (they reconnect and are redirected), its database
    /// closed. The next request opens it again, or is redirected.
    func evict(_ name: String, reason: String) {
        guard let opening = self.forget(name) else { return }
        self.cluster?.logger.warning("\(reason)")
        Task {
            guard let namespace = try? await opening.get() else { return }
            namespace.follower?.follower.close()
            await namespace.hub.closeAll(reason: reason)
            for hook in self.evictionHooks { hook(name) }
            namespace.database.close()
            if let follower = namespace.follower {
                try? await follower.store.forgetReplica(name, node: follower.node)
            }
        }
    }

    /// The leases of the clustered namespaces open here.
    func servedLeases() -> [NamespaceLease] {
        self.openNamespacesNow().compactMap { $0.cluster?.lease }
    }

    /// Stops serving every namespace (this node's lease was lost).
    func evictAll(reason: String) {
        for name in self.servingNames() { self.evict(name, reason: reason) }
    }
}
