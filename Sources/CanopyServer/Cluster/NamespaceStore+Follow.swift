import Canopy
import CanopyCluster
import CanopyCore
import CanopyStorage
import HTTPTypes
import Logging
import Synchronization

extension NamespaceStore {
    /// Opens namespace `name`, led by the node at `leader`, as its follower: loads it from the
    /// cluster's checkpoint and log into a database here and follows the log from there.
    ///
    /// - Throws: ``RESTError`` `503` when the cluster cannot be reached or the load fails.
    func openFollowing(_ name: String, in cluster: ClusterMembership, leader: String, rules setup: RulesSetup) async throws -> Namespace {
        let node = cluster.currentNode.id
        do {
            let start = try await cluster.store.loadRetrying(name)
            let rules = try await Self.clusterRules(of: name, in: cluster.store, setup: setup)
            let database = try Database.inMemory(self.configuration)
            try await database.loop { access in access.apply(.set(.root, WriteValue(node: start.root)), completion: nil) }
            let follower = LogFollower(
                name: name, database: database, applied: Int64(start.lastSequence), store: cluster.store, logger: cluster.logger)
            let forwarder = WriteForwarder(
                name: name, leader: leader, follower: follower, membership: cluster, client: cluster.nodeClient
            ) { [weak self] in
                self?.evict(name, reason: "Namespace \(name) has no live leader; node \(node) stops following it to take it over.")
            }
            let binding = FollowerBinding(follower: follower, forwarder: forwarder, store: cluster.store, node: node)
            cluster.logger.notice("Following namespace \(name) (led at \(leader)) from record \(start.lastSequence).")
            // Records appended while it loaded.
            follower.wake()
            return Namespace.following(name: name, database: database, rules: rules, follower: binding)
        } catch let error as DatabaseError {
            throw RESTError(error)
        }
    }

    /// The rules a followed namespace is served with: those saved in PostgreSQL (damaged ones
    /// lock it), else the server's `--rules`, else the defaults.
    static func clusterRules(of name: String, in store: ClusterStore, setup: RulesSetup) async throws(DatabaseError) -> NamespaceRules {
        guard let saved = try await store.rules(of: name) else { return setup.initial ?? NamespaceRules.defaults(guarded: setup.guarded) }
        return (try? NamespaceRules(source: saved)) ?? .locked
    }

    /// After each heartbeat of this node: its followers read the log (a notification lost while
    /// its listening connection was down costs at most this interval), report what they applied
    /// and take up rules changed at the leader; its leaders run the onDisconnect writes of
    /// connections held by followers that died.
    func afterHeartbeat(_ node: ClusterNode) async {
        guard let cluster = self.cluster else { return }
        var positions: [(namespace: String, applied: Int64)] = []
        var led: [String: Namespace] = [:]
        var followed: [String: Namespace] = [:]
        for namespace in self.openNamespacesNow() {
            if let binding = namespace.follower {
                binding.follower.wake()
                positions.append((namespace.name, binding.follower.applied))
                followed[namespace.name] = namespace
            } else if namespace.cluster != nil {
                led[namespace.name] = namespace
            }
        }
        // Rules changed at a leader, for every namespace followed here in one statement.
        if let saved = try? await cluster.store.rules(of: Array(followed.keys)) {
            for (name, source) in saved {
                guard let namespace = followed[name], source != namespace.rules.withLock({ $0.source }) else { continue }
                try? await namespace.replaceRules(with: (try? NamespaceRules(source: source)) ?? .locked)
            }
        }
        // One statement covers every namespace led here (its followers may be other nodes').
        if !led.isEmpty {
            do throws(DatabaseError) {
                let orphans = try await cluster.store.orphanedOnDisconnectWrites(of: Array(led.keys), node: node.id, includingOwn: false)
                for (name, writes) in Dictionary(grouping: orphans, by: { $0.namespace ?? "" }) {
                    guard let namespace = led[name], let binding = namespace.cluster else { continue }
                    await binding.run(writes, on: namespace) { cluster.logger.warning("\($0)") }
                }
            } catch {
                cluster.logger.warning("Reading the onDisconnect writes of dead followers failed: \(error.message)")
            }
        }
        do throws(DatabaseError) {
            try await cluster.store.reportApplied(positions, node: node.id)
        } catch {
            cluster.logger.warning("Reporting what node \(node.id) applied failed: \(error.message)")
        }
    }
}

extension NamespaceStore {
    /// An append to the log of `payload`'s namespace committed (`NAME SEQUENCE`, or `nil` when
    /// any may have: the listening connection was opened again): its follower here reads it.
    func appendCommitted(_ payload: String?) {
        guard let payload else {
            // Notifications may have been lost: each follower learns its log's head again.
            for namespace in self.openNamespacesNow() {
                guard let binding = namespace.follower else { continue }
                Task {
                    let head = try? await binding.store.head(of: namespace.name)
                    binding.follower.wake(committed: head)
                }
            }
            return
        }
        let parts = payload.split(separator: " ", maxSplits: 1)
        guard let name = parts.first, let namespace = self.openNamespace(String(name)), let binding = namespace.follower else { return }
        binding.follower.wake(committed: parts.count > 1 ? Int64(parts[1]) : nil)
    }
}
