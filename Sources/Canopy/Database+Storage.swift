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
    /// - Throws: `DatabaseError` `.inUse` when another process (or another `Database` in this
    ///   one) has the directory open, `.corrupted` when a file is damaged before its end (naming
    ///   the file and the offset), `.ioError` when the directory cannot be created or read.
    ///
    /// - Complexity: O(*c* + *j*) for a checkpoint of *c* bytes and *j* bytes of journal after it: the
    ///   checkpoint is loaded and the journal replayed.
    public convenience init(path: String, _ configuration: Configuration = Configuration()) throws(DatabaseError) {
        try self.init(configuration: configuration, path: path, io: POSIXFileIO())
    }

    /// Opens (creating it if missing) the durable database kept in the directory at `path`; the
    /// same as ``init(path:_:)``.
    ///
    /// - Complexity: As ``init(path:_:)``: O(*c* + *j*) for a checkpoint of *c* bytes and *j* bytes of
    ///   journal after it: the checkpoint is loaded and the journal replayed.
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
    ///
    /// - Complexity: On first use as ``init(path:_:)``: O(*c* + *j*) for a checkpoint of *c* bytes and *j*
    ///   bytes of journal after it: the checkpoint is loaded and the journal replayed. Later calls are O(1)
    ///   (a table lookup).
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
    ///
    /// - Complexity: O(1) on the loop: the checkpoint captures the tree as it is (shared, not copied), and a
    ///   pool thread writes it, O(*N*) for *N* nodes in the database.
    public func checkpoint(completion: @escaping @Sendable (DatabaseError?) -> Void) {
        guard let store = self.core.store else { return completion(nil) }
        let core = self.core
        let accepted = core.perform { store.checkpoint(root: { core.engine.root }, completion: completion) }
        if !accepted { completion(DatabaseCore.closedError) }
    }

    /// Writes a checkpoint now and retires the journal it covers; returns once it is on disk.
    ///
    /// - Complexity: As ``checkpoint(completion:)``: O(1) on the loop, O(*N*) on a pool thread for *N* nodes
    ///   in the database.
    public func checkpoint() async throws(DatabaseError) {
        let error: DatabaseError? = await withCheckedContinuation { continuation in
            self.checkpoint { continuation.resume(returning: $0) }
        }
        if let error { throw error }
    }

    /// The state of the files of a database opened at a path (`nil` in memory).
    ///
    /// - Complexity: O(*N*) on the loop for *N* nodes in the database (it counts them).
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
