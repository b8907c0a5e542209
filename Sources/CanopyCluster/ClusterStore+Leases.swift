public import CanopyCore
import PostgresNIO

extension ClusterStore {
    /// Makes `node` the leader of `namespace` (creating it) unless a live node leads it: one
    /// statement that bumps the epoch, which waits for the old leader's appends in flight and
    /// refuses every later one of theirs.
    ///
    /// - Returns: The lease, or `nil` when another live node leads the namespace
    ///   (``leader(of:)`` names it).
    public func acquire(_ namespace: String, by node: ClusterNode) async throws(DatabaseError) -> NamespaceLease? {
        try await self.run(
            "INSERT INTO canopy.namespaces (name) VALUES (\(namespace)) ON CONFLICT DO NOTHING", doing: "creating namespace \(namespace)")
        let rows = try await self.run(
            """
            UPDATE canopy.namespaces SET leader = \(node.id), epoch = epoch + 1
             WHERE name = \(namespace) AND (leader IS NULL OR leader = \(node.id) OR NOT canopy.node_alive(leader))
            RETURNING epoch
            """, doing: "taking the lead of namespace \(namespace)")
        guard let row = rows.first else { return nil }
        let epoch = try Self.decode(row, as: Int64.self, doing: "taking the lead of namespace \(namespace)", self.configuration)
        return NamespaceLease(namespace: namespace, epoch: epoch, node: node.id)
    }

    /// Hands `namespace` to node `target` (`canopy cluster move`): bumps the epoch, so its
    /// current leader's next append is refused and it steps down.
    ///
    /// - Throws: `.invalidValue` when the namespace or the target node does not exist or the
    ///   target is not alive.
    @discardableResult
    public func move(_ namespace: String, to target: Int32) async throws(DatabaseError) -> NamespaceLease {
        let rows = try await self.run(
            """
            UPDATE canopy.namespaces SET leader = \(target), epoch = epoch + 1
             WHERE name = \(namespace) AND canopy.node_alive(\(target))
            RETURNING epoch
            """, doing: "moving namespace \(namespace)")
        guard let row = rows.first else {
            throw DatabaseError(
                .invalidValue, "Namespace \(namespace) cannot move to node \(target): one of them does not exist or the node is not alive.")
        }
        let epoch = try Self.decode(row, as: Int64.self, doing: "moving namespace \(namespace)", self.configuration)
        return NamespaceLease(namespace: namespace, epoch: epoch, node: target)
    }

    /// Who leads `namespace` now, or `nil` when no node does (or the namespace does not exist).
    public func leader(of namespace: String) async throws(DatabaseError) -> NamespaceLeader? {
        let rows = try await self.run(
            """
            SELECT n.id, n.advertise, s.epoch, canopy.node_alive(n.id)
              FROM canopy.namespaces s JOIN canopy.nodes n ON n.id = s.leader WHERE s.name = \(namespace)
            """, doing: "reading the leader of namespace \(namespace)")
        guard let row = rows.first else { return nil }
        let (node, advertise, epoch, alive) = try Self.decode(
            row, as: (Int32, String, Int64, Bool).self, doing: "reading the leader of namespace \(namespace)", self.configuration)
        return NamespaceLeader(node: node, advertise: advertise, epoch: epoch, alive: alive)
    }

    static func decode<each T: PostgresDecodable>(
        _ row: PostgresRow, as type: (repeat each T).Type, doing what: String, _ configuration: ClusterConfiguration
    ) throws(DatabaseError) -> (repeat each T) {
        do { return try row.decode((repeat each T).self) } catch { throw Self.failure(error, doing: what, configuration) }
    }
}

extension ClusterStore {
    /// Whether namespace `namespace` exists in the cluster (some node took it once).
    public func exists(_ namespace: String) async throws(DatabaseError) -> Bool {
        let rows = try await self.run(
            "SELECT 1 FROM canopy.namespaces WHERE name = \(namespace)", doing: "looking up namespace \(namespace)")
        return !rows.isEmpty
    }
}

extension ClusterStore {
    /// Which of `leases` are no longer current: their namespace's epoch moved on (a takeover or a
    /// `canopy cluster move`). One statement, however many leases.
    public func superseded(_ leases: [NamespaceLease]) async throws(DatabaseError) -> [NamespaceLease] {
        guard !leases.isEmpty else { return [] }
        let names = leases.map(\.namespace)
        let rows = try await self.run(
            "SELECT name, epoch FROM canopy.namespaces WHERE name = ANY(\(names)::text[])", doing: "checking the leases of this node")
        var epochs: [String: Int64] = [:]
        for row in rows {
            let (name, epoch) = try Self.decode(
                row, as: (String, Int64).self, doing: "checking the leases of this node", self.configuration)
            epochs[name] = epoch
        }
        return leases.filter { epochs[$0.namespace] != $0.epoch }
    }
}
