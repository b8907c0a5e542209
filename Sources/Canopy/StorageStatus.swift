import CanopyCore
import CanopyStorage

/// What a durable database's files hold (``Database/storageStatus()``).
public struct StorageStatus: Sendable, Equatable {
    /// The database directory.
    public var path: String
    public var syncPolicy: SyncPolicy
    /// The sequence number of the last write applied (writes are numbered from 1).
    public var lastSequence: UInt64
    /// Writes applied but not yet durable under the sync policy.
    public var pendingWrites: Int
    /// The sequence number the newest checkpoint covers (0: none yet).
    public var checkpointSequence: UInt64
    public var checkpointBytes: Int
    /// Journal bytes after the checkpoint (a checkpoint is written past the threshold).
    public var journalBytes: Int
    public var checkpointThreshold: Int
    /// Journal records replayed when the database was opened.
    public var replayedAtOpen: Int
    /// What opening repaired (a torn tail cut off, leftover files removed).
    public var recoveryNotes: [String]
    /// Why the journal refuses writes, if it does (after a failure it could not undo).
    public var failure: String?
    /// Nodes in the tree (objects and leaves) and leaves alone.
    public var nodeCount: Int
    public var leafCount: Int

    init(store: DurableStore, syncPolicy: SyncPolicy, root: Node) {
        self.path = store.directory
        self.syncPolicy = syncPolicy
        self.lastSequence = store.nextSequence &- 1
        self.pendingWrites = store.pendingCount
        self.checkpointSequence = store.checkpointSequence
        self.checkpointBytes = store.checkpointBytes
        self.journalBytes = store.journalBytes
        self.checkpointThreshold = store.checkpointThreshold
        self.replayedAtOpen = store.replayedRecords
        self.recoveryNotes = store.recoveryNotes
        self.failure = store.broken?.message
        (self.nodeCount, self.leafCount) = root.counts()
    }
}
