import CanopyCore
package import CanopyStorage
import Synchronization

extension Database {
    /// Opens (creating it if missing) the durable database kept in the directory at `path`.
    ///
    /// Every acknowledged write survives a crash of the process; with ``SyncPolicy/always`` (the
    /// default) also a power cut. Opening loads the newest checkpoint and replays the journal
    /// after it; a torn record at the end of the journal (a crash mid-append) is cut off.
    ///
    /// ```swift
    /// let db = try Database(path: "data/blog")
    /// try await db.reference(withPath: "posts").childByAutoId().setValue(["title": "Hello"])
    /// // returns once the write is on disk
    /// ```
    ///
    /// - Throws: ``DatabaseError`` `.inUse` when another process (or another `Database` in this
    ///   one) has the directory open, `.corrupted` when a file is damaged before its end (naming
    ///   the file and the offset), `.ioError` when the directory cannot be created or read.
    public convenience init(path: String, _ configuration: Configuration = Configuration()) throws(DatabaseError) {
        try self.init(configuration: configuration, path: path, io: POSIXFileIO())
    }

    /// Opens (creating it if missing) the durable database kept in the directory at `path`; the
    /// same as ``init(path:_:)``.
    public static func open(at path: String, _ configuration: Configuration = Configuration()) throws(DatabaseError) -> Database {
        try Database(path: path, configuration)
    }

    /// Opens a database whose file changes go through `io` (tests inject failures with it).
    package convenience init(
        path: String, _ configuration: Configuration, io: any FileIO, journalClock: any JournalClock = SystemJournalClock()
    ) throws(DatabaseError) {
        try self.init(configuration: configuration, path: path, io: io, journalClock: journalClock)
    }

    private static let sharedByPath = Mutex<[String: Database]>([:])

    /// The process-wide database for the directory at `path` (Firebase's
    /// `Database.database(url:)`): opened with the default configuration on first use, then the
    /// same instance for every caller, so parts of one program never fight over the lock.
    public static func database(path: String) throws(DatabaseError) -> Database {
        let key = FileReader.absolutePath(path)
        let result: Result<Database, DatabaseError> = sharedByPath.withLock { table in
            if let existing = table[key], !existing.isClosed { return .success(existing) }
            do throws(DatabaseError) {
                let db = try Database(path: path)
                table[key] = db
                return .success(db)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Writes a checkpoint now and retires the journal it covers (what `canopy compact` does);
    /// `completion` runs on the loop thread once it is on disk. An in-memory database completes
    /// at once.
    public func checkpoint(completion: @escaping @Sendable (DatabaseError?) -> Void) {
        guard let store = self.core.store else { return completion(nil) }
        let core = self.core
        let accepted = core.perform { store.checkpoint(root: { core.engine.root }, completion: completion) }
        if !accepted { completion(DatabaseCore.closedError) }
    }

    /// Writes a checkpoint now and retires the journal it covers; returns once it is on disk.
    public func checkpoint() async throws(DatabaseError) {
        let error: DatabaseError? = await withCheckedContinuation { continuation in
            self.checkpoint { continuation.resume(returning: $0) }
        }
        if let error { throw error }
    }

    /// The state of the files of a database opened at a path (`nil` in memory).
    public func storageStatus() async throws(DatabaseError) -> StorageStatus? {
        guard let store = self.core.store else { return nil }
        let core = self.core
        let syncPolicy = self.syncPolicy
        let status: StorageStatus? = await withCheckedContinuation { continuation in
            let accepted = core.perform {
                continuation.resume(returning: StorageStatus(store: store, syncPolicy: syncPolicy, root: core.engine.root))
            }
            if !accepted { continuation.resume(returning: nil) }
        }
        guard let status else { throw DatabaseCore.closedError }
        return status
    }
}

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

extension Node {
    /// Nodes (objects and leaves) and leaves in this tree. - Complexity: O(*n*)
    func counts() -> (nodes: Int, leaves: Int) {
        switch self {
        case .empty: return (0, 0)
        case .leaf, .prioritizedLeaf: return (1, 1)
        case .children(let children):
            var nodes = 1
            var leaves = 0
            for (_, child) in children.map {
                let (n, l) = child.counts()
                nodes += n
                leaves += l
            }
            return (nodes, leaves)
        }
    }
}
