import Canopy
import CanopyCluster
import CanopyCore
import Foundation
import HTTPTypes
import Synchronization

/// One namespace: its database, the subscriptions that follow it (event streams and SDK listens),
/// and its rules document.
final class Namespace: Sendable {
    let name: String
    let database: Database
    let hub: SubscriptionHub
    /// The rules in force; read on the loop thread when a request is judged, replaced by
    /// `PUT /.settings/rules.json`.
    let rules: Mutex<NamespaceRules>
    /// Where the rules are kept (`nil` in memory or in a cluster).
    let rulesFile: String?
    /// In a cluster: where the namespace is kept, under which lease (at its leader).
    let cluster: ClusterBinding?
    /// In a cluster with `--replicas`: the log this node follows and where its writes go (at a
    /// follower).
    let follower: FollowerBinding?

    private init(
        name: String, database: Database, rules: NamespaceRules, rulesFile: String?, cluster: ClusterBinding? = nil,
        follower: FollowerBinding? = nil
    ) {
        self.name = name
        self.database = database
        self.hub = SubscriptionHub(database: database)
        self.rules = Mutex(rules)
        self.rulesFile = rulesFile
        self.cluster = cluster
        self.follower = follower
    }

    /// A namespace of a cluster: `database` is kept in the cluster's log; rules set over REST and
    /// onDisconnect registrations are saved in its PostgreSQL under the lease.
    static func clustered(name: String, database: Database, rules: NamespaceRules, cluster: ClusterBinding) -> Namespace {
        Namespace(name: name, database: database, rules: rules, rulesFile: nil, cluster: cluster)
    }

    /// A namespace another node leads, followed here: `database` holds its log as applied here.
    static func following(name: String, database: Database, rules: NamespaceRules, follower: FollowerBinding) -> Namespace {
        Namespace(name: name, database: database, rules: rules, rulesFile: nil, follower: follower)
    }

    /// The cluster's store, at a leader or a follower.
    var clusterStore: ClusterStore? { self.cluster?.store ?? self.follower?.store }

    /// Opens namespace `name`: its database, and its rules: the server's `--rules` when given
    /// (kept as the namespace's rules), else the ones kept from an earlier
    /// `PUT /.settings/rules.json`, else ``NamespaceRules/defaults(guarded:)``.
    static func open(name: String, directory: String?, configuration: Database.Configuration, rules setup: RulesSetup) throws
        -> Namespace
    {
        guard let directory else {
            let rules = setup.initial ?? NamespaceRules.defaults(guarded: setup.guarded)
            return Namespace(name: name, database: try Database.inMemory(configuration), rules: rules, rulesFile: nil)
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let base = URL(fileURLWithPath: directory)
        let rulesFile = base.appendingPathComponent("\(name).rules.json").path
        let rules: NamespaceRules
        if let initial = setup.initial {
            rules = initial
            guard FileSystem.writeDurably(Array(initial.source.utf8), to: rulesFile) else {
                throw RESTError(.serviceUnavailable, "Could not save the rules of namespace \"\(name)\".")
            }
        } else if let data = FileManager.default.contents(atPath: rulesFile) {
            // Kept rules were valid when set; a damaged file locks the namespace rather than opening it.
            rules = (try? NamespaceRules(source: String(decoding: data, as: UTF8.self))) ?? .locked
        } else {
            rules = NamespaceRules.defaults(guarded: setup.guarded)
        }
        let database = try Database(path: base.appendingPathComponent(name).path, configuration)
        return Namespace(name: name, database: database, rules: rules, rulesFile: rulesFile)
    }
}

/// What namespaces start with: the server's `--rules`, and whether the server is guarded (see
/// ``ServerState/isGuarded``).
struct RulesSetup: Sendable {
    var guarded = false
    var initial: NamespaceRules?
}
