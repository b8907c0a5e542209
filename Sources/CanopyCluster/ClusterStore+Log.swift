public import CanopyCore
public import NIOCore
import PostgresNIO

/// One record of a namespace's log: the local journal's bytes for one write, at its position.
public struct LogRecord: Sendable, Equatable {
    public var seq: Int64
    /// The epoch of the leader that appended it.
    public var epoch: Int64
    public var bytes: ByteBuffer
}

extension ClusterStore {
    /// Appends `records` at `first`, `first + 1`, … under `lease`, in one statement: it commits
    /// all of them or none.
    ///
    /// - Throws: `.notLeader` when the lease's epoch is no longer the namespace's (a takeover or a
    ///   move committed) or a record already stands at one of the positions: nothing was
    ///   appended. `.clusterUnavailable` when the statement failed on the way: whether it
    ///   committed is unknown (``head(of:)`` and ``read(_:after:limit:)`` tell).
    public func append(_ records: [ByteBuffer], from first: Int64, under lease: NamespaceLease) async throws(DatabaseError) {
        guard !records.isEmpty else { return }
        let rows: [PostgresRow]
        do {
            rows = try await self.run(
                Self.fencedAppend(records, from: first, under: lease), doing: "appending to the log of namespace \(lease.namespace)")
        } catch  where error.code == .inUse {
            throw DatabaseError(
                .notLeader, "The log of namespace \(lease.namespace) already has a record at \(first) or after: another leader appended.")
        }
        let count = try rows.first.map { row throws(DatabaseError) in
            try Self.decode(row, as: (Int64).self, doing: "appending to the log of namespace \(lease.namespace)", self.configuration)
        }
        guard count == Int64(records.count) else {
            throw DatabaseError(.notLeader, "Namespace \(lease.namespace) is no longer led at epoch \(lease.epoch): nothing was appended.")
        }
    }

    /// The channel every append notifies with its namespace's name and its last position
    /// (`NAME SEQUENCE`, delivered when it commits): what wakes the namespace's followers.
    package static let logChannel = "canopy_log"

    /// The statement of every append: it inserts `records` at `first`, `first + 1`, … only while
    /// the namespace's epoch is the lease's, holding the namespace's row in share mode so that a
    /// takeover waits for it; it returns how many rows it inserted (all or none), and notifies
    /// ``logChannel``.
    static func fencedAppend(_ records: [ByteBuffer], from first: Int64, under lease: NamespaceLease) -> PostgresQuery {
        let seqs = (0..<Int64(records.count)).map { first + $0 }
        let wake = "\(lease.namespace) \(first + Int64(records.count) - 1)"
        return """
            WITH lease AS (SELECT 1 FROM canopy.namespaces WHERE name = \(lease.namespace) AND epoch = \(lease.epoch) FOR SHARE),
                 appended AS (
                     INSERT INTO canopy.log (namespace, seq, epoch, record)
                     SELECT \(lease.namespace), t.seq, \(lease.epoch), t.record
                       FROM lease, unnest(\(seqs)::bigint[], \(records)::bytea[]) AS t(seq, record)
                     RETURNING 1)
            SELECT count(*)::bigint FROM appended, (SELECT pg_notify(\(Self.logChannel), \(wake))) AS wake
            """
    }

    /// The position of the newest record of `namespace` (its checkpoint's when the log after it is
    /// empty; 0 for a namespace with neither).
    public func head(of namespace: String) async throws(DatabaseError) -> Int64 {
        let rows = try await self.run(
            """
            SELECT greatest(
                coalesce((SELECT max(seq) FROM canopy.log WHERE namespace = \(namespace)), 0),
                coalesce((SELECT checkpoint_seq FROM canopy.namespaces WHERE name = \(namespace)), 0))::bigint
            """, doing: "reading the head of the log of namespace \(namespace)")
        guard let row = rows.first else { return 0 }
        return try Self.decode(row, as: (Int64).self, doing: "reading the head of the log of namespace \(namespace)", self.configuration)
    }

    /// The records of `namespace` at positions `after + 1` to `after + limit`, in order (fewer at
    /// the log's head, or where a checkpoint deleted them: ``head(of:)`` tells).
    ///
    /// The range is bounded on both sides so that PostgreSQL reads it from the primary key
    /// whatever its statistics say (unbounded, a fresh table's plan scanned and sorted the whole
    /// tail for every page).
    public func read(_ namespace: String, after: Int64, limit: Int = 10_000) async throws(DatabaseError) -> [LogRecord] {
        let what = "reading the log of namespace \(namespace)"
        let last = after + Int64(limit)
        let rows = try await self.run(
            """
            SELECT seq, epoch, record FROM canopy.log
             WHERE namespace = \(namespace) AND seq > \(after) AND seq <= \(last) ORDER BY seq LIMIT \(limit)
            """,
            doing: what)
        var records: [LogRecord] = []
        records.reserveCapacity(rows.count)
        for row in rows {
            let (seq, epoch, bytes) = try Self.decode(row, as: (Int64, Int64, ByteBuffer).self, doing: what, self.configuration)
            records.append(LogRecord(seq: seq, epoch: epoch, bytes: bytes))
        }
        return records
    }
}
