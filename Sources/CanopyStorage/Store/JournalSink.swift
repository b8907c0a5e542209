package import CanopyCore
import Synchronization

/// Where a ``DurableStore`` makes writes durable and keeps its checkpoints: the storage seam.
///
/// Two implementations: the local journal (``JournalWriter``, segment files and checkpoint files
/// in the database's directory) and a cluster's log in PostgreSQL (`ClusterJournal`, in the
/// CanopyCluster module). The store hands over records in sequence order from its loop thread and
/// learns through the ``JournalWriter/Callbacks`` it gave the sink how far they are durable, or
/// that a batch failed.
package protocol JournalSink: AnyObject, Sendable {
    /// Hands over writes, in sequence order after everything handed over before; `false` when the
    /// sink dropped them (after a failure, before ``resume()``; when broken or closing).
    @discardableResult
    func append(writes: [JournalRecord]) -> Bool

    /// After everything handed over so far is durable (the local journal: synced, and a new
    /// segment starting at `firstSequence` begun), calls `done` on any thread.
    func rotate(firstSequence: UInt64, done: @escaping @Sendable (DatabaseError?) -> Void)

    /// Stores `root`, the tree right after record `sequence`, as the newest checkpoint, and drops
    /// what it covers (older checkpoints, records up to `sequence`). Blocks; runs on a pool
    /// thread, after a ``rotate(firstSequence:done:)`` to `sequence + 1` reported success.
    ///
    /// - Returns: The checkpoint's size in bytes.
    func writeCheckpoint(root: Node, sequence: UInt64) throws(DatabaseError) -> Int

    /// Accepts appends again after a failure the owner has undone.
    func resume()

    /// The bytes of the records encoded so far (any thread).
    var encodedByteCount: Int { get }

    /// The bytes the records after a rotation start from (a new segment's header).
    var emptySegmentBytes: Int { get }

    /// Why the sink refuses every write, if it does.
    var brokenError: DatabaseError? { get }

    /// Blocks until everything handed over has been reported durable or failed.
    func waitUntilIdle()

    /// Makes durable what is left and stops (blocks until done).
    func close()
}

extension JournalWriter: JournalSink {
    package var encodedByteCount: Int { self.encodedBytes.load(ordering: .relaxed) }

    package var emptySegmentBytes: Int { JournalFormat.headerSize }

    package func writeCheckpoint(root: Node, sequence: UInt64) throws(DatabaseError) -> Int {
        try CheckpointWriter.write(root: root, sequence: sequence, directory: self.directory, files: self.files)
    }
}
