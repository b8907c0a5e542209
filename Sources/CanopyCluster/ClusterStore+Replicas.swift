public import CanopyCore
import Logging
import PostgresNIO

/// What a follower applied of a namespace's log, as it last reported it.
public struct ReplicaPosition: Sendable, Codable, Equatable {
    public var node: Int32
    /// The position of the last record it applied.
    public var applied: Int64
    /// Seconds since it reported.
    public var ageSeconds: Double
}

extension ClusterStore {
    /// The secret nodes present to each other (made once, by the first node to start).
    package func nodeSecret() async throws(DatabaseError) -> String {
        let what = "reading the cluster's node secret"
        let rows = try await self.run("SELECT secret FROM canopy.secret", doing: what)
        guard let row = rows.first else { throw DatabaseError(.clusterUnavailable, "The cluster's PostgreSQL holds no node secret.") }
        return try Self.decode(row, as: (String).self, doing: what, self.configuration)
    }

    /// Records that `node` applied each namespace's log up to its position (one statement).
    package func reportApplied(_ positions: [(namespace: String, applied: Int64)], node: Int32) async throws(DatabaseError) {
        guard !positions.isEmpty else { return }
        try await self.run(
            """
            INSERT INTO canopy.replicas (namespace, node, applied)
            SELECT t.namespace, \(node), t.applied FROM unnest(\(positions.map(\.namespace))::text[], \(positions.map(\.applied))::bigint[])
                AS t(namespace, applied)
            ON CONFLICT (namespace, node) DO UPDATE SET applied = excluded.applied, reported_at = now()
            """, doing: "reporting what node \(node) applied")
    }

    /// Forgets that `node` follows `namespace` (it stopped).
    package func forgetReplica(_ namespace: String, node: Int32) async throws(DatabaseError) {
        try await self.run(
            "DELETE FROM canopy.replicas WHERE namespace = \(namespace) AND node = \(node)",
            doing: "forgetting node \(node) as a follower of namespace \(namespace)")
    }

    /// The live followers of `namespace` and what each applied, by node.
    public func replicas(of namespace: String) async throws(DatabaseError) -> [ReplicaPosition] {
        let what = "reading the followers of namespace \(namespace)"
        let rows = try await self.run(
            """
            SELECT node, applied, extract(epoch FROM now() - reported_at)::float8 FROM canopy.replicas
             WHERE namespace = \(namespace) AND canopy.node_alive(node) ORDER BY node
            """, doing: what)
        var replicas: [ReplicaPosition] = []
        for row in rows {
            let (node, applied, age) = try Self.decode(row, as: (Int32, Int64, Double).self, doing: what, self.configuration)
            replicas.append(ReplicaPosition(node: node, applied: applied, ageSeconds: age))
        }
        return replicas
    }

    /// Calls `wake` with the namespace of every log append that commits, from a connection of its
    /// own, until the task is cancelled; after every (re)connection `wake` gets `nil` (appends
    /// may have committed while nothing listened). A lost connection is opened again after
    /// `retry`.
    package func followAppends(retry: Duration, wake: @escaping @Sendable (String?) -> Void) async {
        while !Task.isCancelled {
            do {
                let connection = try await Self.openConnection(self.configuration, logger: self.logger)
                do {
                    try await connection.listen(on: Self.logChannel) { notifications in
                        wake(nil)
                        for try await notification in notifications { wake(notification.payload) }
                    }
                } catch {
                    self.logger.warning(
                        "Listening for appends to the cluster's log failed: \(Self.failure(error, doing: "listening", self.configuration).message)"
                    )
                }
                try? await connection.close()
            } catch {
                self.logger.warning("Listening for appends to the cluster's log failed: \(error.message)")
            }
            try? await Task.sleep(for: retry)
        }
    }
}
