public import CanopyCore
import PostgresNIO

extension ClusterStore {
    /// Makes `rules` (a rules document's text) the rules of `lease`'s namespace, fenced like an
    /// append: every node that serves the namespace reads the same rules from here.
    ///
    /// - Throws: `.notLeader` when the lease's epoch is no longer the namespace's.
    public func setRules(_ rules: String, under lease: NamespaceLease) async throws(DatabaseError) {
        let rows = try await self.run(
            """
            WITH lease AS (SELECT 1 FROM canopy.namespaces WHERE name = \(lease.namespace) AND epoch = \(lease.epoch) FOR SHARE),
                 saved AS (
                     INSERT INTO canopy.rules (namespace, rules, epoch)
                     SELECT \(lease.namespace), \(rules), \(lease.epoch) FROM lease
                     ON CONFLICT (namespace) DO UPDATE SET rules = excluded.rules, epoch = excluded.epoch, updated_at = now()
                     RETURNING 1)
            SELECT count(*)::bigint FROM saved
            """, doing: "saving the rules of namespace \(lease.namespace)")
        let saved = try rows.first.map { row throws(DatabaseError) in
            try Self.decode(row, as: (Int64).self, doing: "saving the rules of namespace \(lease.namespace)", self.configuration)
        }
        guard saved == 1 else {
            throw DatabaseError(
                .notLeader, "Namespace \(lease.namespace) is no longer led at epoch \(lease.epoch): its rules were not saved.")
        }
    }

    /// The rules of `namespace`, or `nil` when none were saved (the server's default rules apply).
    public func rules(of namespace: String) async throws(DatabaseError) -> String? {
        let what = "reading the rules of namespace \(namespace)"
        let rows = try await self.run("SELECT rules FROM canopy.rules WHERE namespace = \(namespace)", doing: what)
        return try rows.first.map { row throws(DatabaseError) in try Self.decode(row, as: (String).self, doing: what, self.configuration) }
    }

    /// The rules saved for each of `namespaces` that has some, by namespace (one statement: a
    /// follower checks those it follows after each heartbeat).
    public func rules(of namespaces: [String]) async throws(DatabaseError) -> [String: String] {
        guard !namespaces.isEmpty else { return [:] }
        let what = "reading the rules of \(namespaces.count) namespaces"
        let rows = try await self.run(
            "SELECT namespace, rules FROM canopy.rules WHERE namespace = ANY(\(namespaces)::text[])", doing: what)
        var rules: [String: String] = [:]
        for row in rows {
            let (namespace, text) = try Self.decode(row, as: (String, String).self, doing: what, self.configuration)
            rules[namespace] = text
        }
        return rules
    }
}
