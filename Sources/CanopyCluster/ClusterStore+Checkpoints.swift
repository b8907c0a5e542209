public import CanopyCore
public import NIOCore
import PostgresNIO

/// A namespace's newest checkpoint: its whole tree after the write at ``seq``.
public struct ClusterCheckpoint: Sendable, Equatable {
    public var seq: Int64
    public var bytes: ByteBuffer
}

extension ClusterStore {
    /// The most bytes in one row of `canopy.checkpoints`.
    public static let checkpointPartSize = 4 << 20

    /// Records `bytes` as the checkpoint of `lease`'s namespace through position `seq`, in parts
    /// of at most `partSize` bytes, in one transaction that also deletes the older checkpoint and
    /// the log at and below `seq`. The transaction is fenced like an append: it commits only under
    /// the lease's epoch.
    ///
    /// - Throws: `.notLeader` when the epoch moved on; `.invalidValue` when `seq` is past the
    ///   log's head; `.clusterUnavailable` when PostgreSQL failed (nothing changed).
    public func writeCheckpoint(
        _ bytes: ByteBuffer, through seq: Int64, under lease: NamespaceLease, partSize: Int = ClusterStore.checkpointPartSize
    ) async throws(DatabaseError) {
        let namespace = lease.namespace
        let what = "writing a checkpoint of namespace \(namespace)"
        let head = try await self.head(of: namespace)
        guard seq <= head else {
            throw DatabaseError(.invalidValue, "A checkpoint of namespace \(namespace) through \(seq) is past its log's head (\(head)).")
        }
        let step = max(1, partSize)
        let parts = stride(from: 0, to: max(bytes.readableBytes, 1), by: step).map { offset in
            bytes.getSlice(at: bytes.readerIndex + offset, length: min(step, bytes.readableBytes - offset)) ?? ByteBuffer()
        }
        do {
            try await self.client.withTransaction(logger: self.logger) { connection in
                let rows = try await connection.query(
                    """
                    UPDATE canopy.namespaces SET checkpoint_seq = \(seq), checkpoint_at = now()
                     WHERE name = \(namespace) AND epoch = \(lease.epoch) RETURNING 1
                    """, logger: self.logger)
                var fenced = true
                for try await _ in rows { fenced = false }
                if fenced {
                    throw DatabaseError(
                        .notLeader, "Namespace \(namespace) is no longer led at epoch \(lease.epoch): the checkpoint was not written.")
                }
                try await connection.query("DELETE FROM canopy.checkpoints WHERE namespace = \(namespace)", logger: self.logger)
                for (index, part) in parts.enumerated() {
                    try await connection.query(
                        "INSERT INTO canopy.checkpoints (namespace, seq, part, data) VALUES (\(namespace), \(seq), \(Int32(index)), \(part))",
                        logger: self.logger)
                }
                try await connection.query("DELETE FROM canopy.log WHERE namespace = \(namespace) AND seq <= \(seq)", logger: self.logger)
            }
        } catch {
            throw Self.failure(error, doing: what, self.configuration)
        }
    }

    /// The newest checkpoint of `namespace`, or `nil` when it has none.
    public func checkpoint(of namespace: String) async throws(DatabaseError) -> ClusterCheckpoint? {
        let what = "reading the checkpoint of namespace \(namespace)"
        let rows = try await self.run(
            "SELECT seq, data FROM canopy.checkpoints WHERE namespace = \(namespace) ORDER BY part", doing: what)
        guard !rows.isEmpty else { return nil }
        var bytes = ByteBuffer()
        var seq: Int64 = 0
        for row in rows {
            let (partSeq, part) = try Self.decode(row, as: (Int64, ByteBuffer).self, doing: what, self.configuration)
            seq = partSeq
            bytes.writeImmutableBuffer(part)
        }
        return ClusterCheckpoint(seq: seq, bytes: bytes)
    }
}
