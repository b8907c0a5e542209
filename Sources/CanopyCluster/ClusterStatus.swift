public import CanopyCore
import PostgresNIO

/// What `canopy cluster status` shows: the nodes, and each namespace with its leader, epoch, log
/// position and checkpoint, as PostgreSQL has them now.
public struct ClusterStatus: Sendable, Codable, Equatable {
    public struct Node: Sendable, Codable, Equatable {
        public var id: Int32
        public var advertise: String
        public var version: String
        /// Seconds since the node started.
        public var uptimeSeconds: Double
        /// Seconds left on its lease (negative once it ran out).
        public var leaseSeconds: Double
        /// Whether its lease runs and its session holds its lock.
        public var alive: Bool
    }

    public struct Namespace: Sendable, Codable, Equatable {
        public var name: String
        public var leader: Int32?
        public var leaderAdvertise: String?
        public var leaderAlive: Bool
        public var epoch: Int64
        /// The position of its newest record.
        public var head: Int64
        public var checkpoint: Int64
        /// Seconds since its checkpoint was written, if it has one.
        public var checkpointAgeSeconds: Double?
        /// Records in the log after the checkpoint.
        public var logRecords: Int64
        /// Its live followers (`--replicas`) and what each applied.
        public var followers: [ReplicaPosition] = []
    }

    public var nodes: [Node]
    public var namespaces: [Namespace]
}

extension ClusterStore {
    /// The cluster's nodes and namespaces now.
    public func status() async throws(DatabaseError) -> ClusterStatus {
        let what = "reading the cluster's status"
        let nodeRows = try await self.run(
            """
            SELECT id, advertise, version, extract(epoch FROM now() - started_at)::float8,
                   extract(epoch FROM lease_until - now())::float8, canopy.node_alive(id)
              FROM canopy.nodes ORDER BY id
            """, doing: what)
        var nodes: [ClusterStatus.Node] = []
        for row in nodeRows {
            let (id, advertise, version, uptime, lease, alive) = try Self.decode(
                row, as: (Int32, String, String, Double, Double, Bool).self, doing: what, self.configuration)
            nodes.append(
                ClusterStatus.Node(id: id, advertise: advertise, version: version, uptimeSeconds: uptime, leaseSeconds: lease, alive: alive)
            )
        }
        let namespaceRows = try await self.run(
            """
            SELECT s.name, s.leader, n.advertise, coalesce(canopy.node_alive(s.leader), false), s.epoch,
                   greatest(coalesce(l.head, 0), s.checkpoint_seq)::bigint, s.checkpoint_seq,
                   extract(epoch FROM now() - s.checkpoint_at)::float8, coalesce(l.records, 0)::bigint
              FROM canopy.namespaces s
              LEFT JOIN canopy.nodes n ON n.id = s.leader
              LEFT JOIN LATERAL (SELECT max(seq) AS head, count(*) AS records FROM canopy.log WHERE namespace = s.name) l ON true
             ORDER BY s.name
            """, doing: what)
        var namespaces: [ClusterStatus.Namespace] = []
        for row in namespaceRows {
            let (name, leader, advertise, alive, epoch, head, checkpoint, age, records) = try Self.decode(
                row, as: (String, Int32?, String?, Bool, Int64, Int64, Int64, Double?, Int64).self, doing: what, self.configuration)
            namespaces.append(
                ClusterStatus.Namespace(
                    name: name, leader: leader, leaderAdvertise: advertise, leaderAlive: alive, epoch: epoch, head: head,
                    checkpoint: checkpoint, checkpointAgeSeconds: age, logRecords: records))
        }
        let replicaRows = try await self.run(
            """
            SELECT namespace, node, applied, extract(epoch FROM now() - reported_at)::float8 FROM canopy.replicas
             WHERE canopy.node_alive(node) ORDER BY namespace, node
            """, doing: what)
        for row in replicaRows {
            let (name, node, applied, age) = try Self.decode(row, as: (String, Int32, Int64, Double).self, doing: what, self.configuration)
            guard let index = namespaces.firstIndex(where: { $0.name == name }) else { continue }
            namespaces[index].followers.append(ReplicaPosition(node: node, applied: applied, ageSeconds: age))
        }
        return ClusterStatus(nodes: nodes, namespaces: namespaces)
    }
}
