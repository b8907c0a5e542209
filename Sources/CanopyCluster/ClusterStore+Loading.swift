package import CanopyCore
package import CanopyStorage
import NIOCore

extension ClusterStore {
    /// The tree of `namespace` as PostgreSQL keeps it: its newest checkpoint, then every record of
    /// the log after it, applied in order (what a new leader serves from).
    ///
    /// - Throws: `.corrupted` naming the record or checkpoint that does not decode or apply, or a
    ///   gap in the log; `.clusterUnavailable` when PostgreSQL cannot be reached.
    /// - Complexity: O(*c* + *r*) for a checkpoint of *c* bytes and *r* bytes of log after it,
    ///   read in pages of `pageSize` records.
    package func load(_ namespace: String, pageSize: Int = 10_000) async throws(DatabaseError) -> DurableStore.Start {
        var root = Node.empty
        var checkpointSequence: UInt64 = 0
        var checkpointBytes = 0
        if let checkpoint = try await self.checkpoint(of: namespace) {
            let bytes = Array(checkpoint.bytes.readableBytesView)
            let name = "the checkpoint of namespace \(namespace)"
            let decoded = try bytes.withBytes { raw throws(DatabaseError) in try CheckpointFormat.decode(raw, fileName: name) }
            guard decoded.sequence == UInt64(checkpoint.seq) else {
                throw DatabaseError(
                    .corrupted,
                    "The checkpoint of namespace \(namespace) covers record \(decoded.sequence), not the \(checkpoint.seq) it is filed under."
                )
            }
            root = decoded.root
            checkpointSequence = decoded.sequence
            checkpointBytes = bytes.count
        }
        let engine = SyncEngine(root: root)
        var last = checkpointSequence
        var logBytes = 0
        var replayed = 0
        // Read after the checkpoint, so that the records up to it are all there (records appended
        // later are a follower's to read next).
        let head = try await self.head(of: namespace)
        while Int64(last) < head {
            let page = try await self.read(namespace, after: Int64(last), limit: pageSize)
            guard !page.isEmpty else {
                throw DatabaseError(
                    .corrupted,
                    "The log of namespace \(namespace) reaches record \(head) but records after \(last) are missing (or a checkpoint was written meanwhile: load it again)."
                )
            }
            for record in page {
                let container = "Record \(record.seq) of the log of namespace \(namespace)"
                let (sequence, now, write) = try LogRecord.decode(record.bytes, in: container)
                guard sequence == last &+ 1, sequence == UInt64(record.seq) else {
                    throw DatabaseError(.corrupted, "\(container) holds record \(sequence) after record \(last): records are missing.")
                }
                do throws(DatabaseError) {
                    _ = try engine.apply(write, now: now)
                } catch {
                    throw DatabaseError(.corrupted, "\(container) cannot be replayed: \(error.message)")
                }
                last = sequence
                logBytes += record.bytes.readableBytes
                replayed += 1
            }
        }
        return DurableStore.Start(
            root: engine.root, lastSequence: last, checkpointSequence: checkpointSequence, checkpointBytes: checkpointBytes,
            journalBytes: logBytes, replayedRecords: replayed)
    }
}
