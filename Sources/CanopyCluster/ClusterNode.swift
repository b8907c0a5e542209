public import CanopyCore
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// A node registered in the cluster: its row in `canopy.nodes`, and the PostgreSQL session that
/// holds its advisory lock for as long as the process lives.
///
/// Other nodes count it alive while its lease runs and its lock is held (`canopy.node_alive`): a
/// killed process frees its lock at once; a node cut from PostgreSQL loses its lease after
/// ``ClusterConfiguration/lease``.
public final class ClusterNode: Sendable {
    public let id: Int32
    public let advertise: String
    let session: PostgresConnection
    let store: ClusterStore
    /// When this node's lease runs out by its own clock: the moment its last successful heartbeat
    /// was *sent*, plus the lease (PostgreSQL counted from later, so this is never too late).
    private let deadline: Mutex<ContinuousClock.Instant>

    init(id: Int32, advertise: String, session: PostgresConnection, store: ClusterStore, sentAt: ContinuousClock.Instant) {
        self.id = id
        self.advertise = advertise
        self.session = session
        self.store = store
        self.deadline = Mutex(sentAt + store.configuration.lease)
    }

    deinit {
        // A node dropped without ``leave()`` ends its session (the advisory lock frees).
        // The completion holds the connection until it is closed (postgres-nio asserts that a
        // connection is closed before it is freed).
        let session = self.session
        let closing: EventLoopFuture<Void> = session.close()
        closing.whenComplete { _ in withExtendedLifetime(session) {} }
    }

    /// When the lease runs out unless a heartbeat renews it.
    public var leaseDeadline: ContinuousClock.Instant { self.deadline.withLock { $0 } }

    /// Whether the lease still runs by this node's clock.
    public var holdsLease: Bool { ContinuousClock.now < self.leaseDeadline }

    /// Whether the node's session ended (PostgreSQL restarted, or ended it): its advisory lock is
    /// gone, so other nodes count it dead; it must register again.
    public var sessionEnded: Bool { self.session.isClosed }

    /// Renews the node's lease.
    ///
    /// - Throws: `.notLeader` when the node's row is gone (other nodes judged it dead and a node
    ///   took its address): it leads nothing any more and must register again;
    ///   `.clusterUnavailable` when PostgreSQL cannot be reached.
    public func heartbeat() async throws(DatabaseError) {
        let sentAt = ContinuousClock.now
        let lease = Self.microseconds(self.store.configuration.lease)
        let session = self.session
        let logger = self.store.logger
        let seconds = Double(lease) / 1e6
        // A heartbeat that takes longer than the interval between two has failed.
        let deadline = min(self.leaseDeadline, sentAt + self.store.configuration.lease / 3)
        let renewed = try await withDeadline(
            deadline, doing: "renewing the lease of node \(self.id)", onTimeout: { try? await session.close() }
        ) { [id = self.id, configuration = self.store.configuration] () async throws(DatabaseError) in
            do {
                let query: PostgresQuery =
                    "UPDATE canopy.nodes SET lease_until = now() + make_interval(secs => \(seconds)) WHERE id = \(id) RETURNING id"
                let rows = try await session.query(query, logger: logger)
                var count = 0
                for try await _ in rows { count += 1 }
                return count == 1
            } catch {
                throw ClusterStore.failure(error, doing: "renewing the lease of node \(id)", configuration)
            }
        }
        guard renewed else {
            throw DatabaseError(.notLeader, "Node \(self.id) (\(self.advertise)) was judged dead by the cluster; it must register again.")
        }
        self.deadline.withLock { $0 = max($0, sentAt + self.store.configuration.lease) }
    }

    /// Leaves the cluster: deletes the node's row (the namespaces it led have no leader until
    /// another node takes them) and closes its session. A PostgreSQL that does not answer within
    /// 5 s (or a third of the lease) leaves the row, which the others judge dead once its lease
    /// runs out.
    public func leave() async {
        let session = self.session
        let logger = self.store.logger
        _ = try? await withDeadline(
            ContinuousClock.now + min(self.store.configuration.lease / 3, .seconds(5)), doing: "removing node \(self.id)",
            onTimeout: { try? await session.close() }
        ) { [id = self.id] () async throws(DatabaseError) in
            _ = try? await session.query("DELETE FROM canopy.nodes WHERE id = \(id)", logger: logger)
        }
        try? await self.session.close()
    }

    static func microseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
    }
}

extension ClusterStore {
    /// Registers a node advertised at `advertise` (how clients reach it) and takes its advisory
    /// lock. A dead node's row with the same address is replaced.
    ///
    /// - Throws: `.inUse` when a live node already advertises `advertise`; `.clusterUnavailable`
    ///   when PostgreSQL cannot be reached.
    public func register(advertise: String, version: String) async throws(DatabaseError) -> ClusterNode {
        let session = try await Self.openConnection(self.configuration, logger: self.logger)
        let sentAt = ContinuousClock.now
        let lease = Double(ClusterNode.microseconds(self.configuration.lease)) / 1e6
        let id: Int32?
        do {
            id = try await session.withTransaction(logger: self.logger) { connection in
                try await connection.query(
                    "DELETE FROM canopy.nodes WHERE advertise = \(advertise) AND NOT canopy.node_alive(id)", logger: self.logger)
                let rows = try await connection.query(
                    """
                    INSERT INTO canopy.nodes (advertise, version, lease_until)
                    VALUES (\(advertise), \(version), now() + make_interval(secs => \(lease)))
                    ON CONFLICT (advertise) DO NOTHING RETURNING id
                    """, logger: self.logger)
                var id: Int32?
                for try await (value) in rows.decode(Int32.self) { id = value }
                guard let id else { return nil }
                // Session-level: the lock outlives this transaction and frees when the session ends.
                try await connection.query("SELECT pg_advisory_lock(\(ClusterSchema.lockClass), \(id))", logger: self.logger)
                return id
            }
        } catch {
            try? await session.close()
            throw Self.failure(error, doing: "registering node \(advertise)", self.configuration)
        }
        guard let id else {
            try? await session.close()
            throw DatabaseError(.inUse, "Another live node of the cluster advertises \(advertise).")
        }
        return ClusterNode(id: id, advertise: advertise, session: session, store: self, sentAt: sentAt)
    }
}
