import CanopyCore
import CanopyLoop
package import CanopyStorage
public import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A realtime JSON-tree database: the entry point, like Firebase's `Database`.
///
/// A database owns its data and an event loop. Writes may be issued from any thread; they are
/// applied in the order each thread issued them, one at a time, and every observer callback runs
/// on the database's loop thread, right after the write that caused it.
///
/// ```swift
/// let db = try Database.inMemory()
/// let posts = db.reference(withPath: "posts")
/// posts.observe(.childAdded) { snapshot in print("new post", snapshot.key ?? "") }
/// try await posts.childByAutoId().setValue(["title": "Hello", "starCount": 0])
/// ```
public final class Database: Sendable {
    /// How the loop thread is provided.
    public enum LoopMode: Sendable {
        /// The database starts its own loop thread (the default).
        case dedicatedThread
        /// Nothing runs until the owner calls ``Database/drain()``, which runs every queued job
        /// and callback on the calling thread. For deterministic tests.
        case manual
        /// The owner's thread runs the loop by calling ``Database/run()``, which blocks until the
        /// database is closed or the process gets SIGINT (Ctrl-C) or SIGTERM. For command-line
        /// programs whose main thread has nothing else to do.
        case callerThread
    }

    /// Options for creating a database.
    public struct Configuration: Sendable {
        public var loopMode: LoopMode = .dedicatedThread
        /// Jobs that may wait for the loop before writers on other threads block.
        public var inboxCapacity: Int = 65_536
        /// The clock server timestamps resolve to, in milliseconds since 1970.
        public var clock: @Sendable () -> Int64 = DatabaseCore.systemClock
        /// For a database opened at a path: when a write's completion fires (see ``SyncPolicy``).
        public var syncPolicy: SyncPolicy = .always
        /// For a database opened at a path: the journal size, in bytes, past which a checkpoint is
        /// written in the background and the journal it covers is retired.
        public var checkpointThreshold: Int = 64 << 20
        /// Where a durable database reports what opening repaired (a torn tail cut off, leftover
        /// files removed) and journal failures, as warnings and errors.
        public var logger = Logger(label: "canopy.storage")
        /// How many triggers deep a write may be: a write made by a trigger reacting to a write that
        /// no trigger made is 1 deep, a write made in reaction to that one 2 deep, and so on. A write
        /// deeper than this is refused with `DatabaseError.Code.triggerDepthExceeded` (see
        /// <doc:TransactionsBatchesTriggers>).
        public var maxTriggerDepth = 16
        /// For `Database(url:)`: the credential the client signs in with (the
        /// server's admin token, or a user's ID token), sent after each connect. `nil`: unauthenticated.
        public var authToken: String?
        /// For `Database(url:)`: called before each connection signs in (and
        /// again when the server revokes the credential, as when a user's token expires), for the
        /// credential to send; it takes precedence over ``authToken``. `nil` from it: signed out.
        /// A thrown error closes that connection; the next attempt asks again.
        public var authTokenProvider: (@Sendable () async throws -> String?)?
        /// For `Database(url:)`: a directory where the cache and the queue of
        /// unacknowledged writes are kept durably (Canopy's own storage), so queued writes survive a
        /// restart and cached data is shown before the server answers (Firebase's
        /// `isPersistenceEnabled`). `nil`: in memory only.
        public var persistencePath: String?
        /// For `Database(url:)`: the first wait before reconnecting; each failed
        /// attempt waits 1.3 times longer (with jitter), up to ``maximumRetryDelay``.
        public var minimumRetryDelay: Duration = .seconds(1)
        /// For `Database(url:)`: the longest wait between reconnection attempts.
        public var maximumRetryDelay: Duration = .seconds(30)
        /// For `Database(url:)`: how long `getData()` waits for the server before
        /// answering from the cache (or failing when the cache has nothing there).
        public var requestTimeout: Duration = .seconds(10)
        /// For `Database(url:)`: how long a write's completion (or `async` form)
        /// waits for the server's acknowledgement before it gets a `DatabaseError.Code.disconnected`
        /// error; the write itself stays queued and is still sent (its outcome is then no longer
        /// reported). `nil` (the default, as in the Firebase SDKs): wait until the server answers.
        public var acknowledgementTimeout: Duration?

        public init() {}
    }

    package let core: DatabaseCore
    let loopMode: LoopMode
    /// For a database opened at a path: when write completions fire.
    let syncPolicy: SyncPolicy
    /// The directory this database keeps its files in, or `nil` for an in-memory database.
    public let path: String?

    package convenience init(
        configuration: Configuration, path: String? = nil, io: any FileIO = POSIXFileIO(),
        journalClock: any JournalClock = SystemJournalClock()
    ) throws(DatabaseError) {
        var open: ((any StoreLoop) throws(DatabaseError) -> DurableStore)?
        if let path {
            open = { (loop: any StoreLoop) throws(DatabaseError) -> DurableStore in
                try DurableStore.open(directory: path, loop: loop, options: configuration.storeOptions(journalClock: journalClock), io: io)
            }
        }
        try self.init(configuration: configuration, path: path, store: open)
    }

    /// A database kept by the store `store` opens on the database's loop (`nil`: in memory):
    /// the local journal, or a cluster's log (the CanopyCluster module).
    package init(
        configuration: Configuration, path: String?, store openStore: ((any StoreLoop) throws(DatabaseError) -> DurableStore)?
    ) throws(DatabaseError) {
        self.loopMode = configuration.loopMode
        self.syncPolicy = configuration.syncPolicy
        self.path = path
        let loop: EventLoop
        do {
            loop = try EventLoop(inboxCapacity: configuration.inboxCapacity)
            if configuration.loopMode == .dedicatedThread { try loop.startThread(name: "canopy-loop") }
        } catch {
            throw DatabaseError(.ioError, "Could not start the database loop: \(error)")
        }
        guard let openStore else {
            self.core = DatabaseCore(
                loop: loop, clock: configuration.clock, maxTriggerDepth: configuration.maxTriggerDepth, logger: configuration.logger)
            return
        }
        let store: DurableStore
        do throws(DatabaseError) {
            store = try openStore(StoreLoopAdapter(loop: loop))
        } catch {
            _ = loop.shutdown()
            throw error
        }
        self.core = DatabaseCore(
            loop: loop, clock: configuration.clock, root: store.openedRoot, store: store, maxTriggerDepth: configuration.maxTriggerDepth,
            logger: configuration.logger)
        store.openedRoot = .empty
    }

    deinit {
        self.core.close()
    }

    /// Creates an empty database that lives in memory only.
    public static func inMemory(_ configuration: Configuration = Configuration()) throws(DatabaseError) -> Database {
        try Database(configuration: configuration)
    }

    private static let sharedDefault = Mutex<Database?>(nil)

    /// The process-wide default database (Firebase's `Database.database()`): an in-memory
    /// database created on first use.
    ///
    /// Starting its loop thread fails only when the process is out of threads or descriptors; the
    /// database returned then is closed (every operation fails with `DatabaseError.Code.closed`)
    /// and the next call tries again.
    public static func database() -> Database {
        sharedDefault.withLock { current in
            if let current { return current }
            do throws(DatabaseError) {
                let db = try Database(configuration: Configuration())
                current = db
                return db
            } catch {
                return Self.unavailable(error)
            }
        }
    }

    /// A closed database standing in for a default database that could not start.
    private static func unavailable(_ error: DatabaseError) -> Database {
        var configuration = Configuration()
        configuration.loopMode = .manual  // no thread to start
        guard let db = try? Database(configuration: configuration) else {
            fatalError("Canopy could not create even an idle event loop: \(error)")
        }
        db.close()
        return db
    }

    /// A reference to the root of the database.
    public func reference() -> DatabaseReference {
        DatabaseReference(database: self, path: .root, error: nil)
    }

    /// A reference to `path` (slashes separate keys; empty segments are ignored).
    ///
    /// An invalid path does not trap: the reference reports the error to every operation on it.
    ///
    /// - Complexity: O(*d*) for a path of *d* keys (each key is validated).
    public func reference(withPath path: String) -> DatabaseReference {
        do {
            return DatabaseReference(database: self, path: try DatabasePath(validating: path, function: "reference(withPath:)"), error: nil)
        } catch {
            return DatabaseReference(database: self, path: .root, error: error)
        }
    }

    /// Runs every queued job and due callback on the calling thread; returns how many jobs ran.
    /// Only for databases created with ``LoopMode/manual``.
    @discardableResult
    public func drain() -> Int {
        var jobs = self.core.loop.drain()
        // A durable database also waits for the journal, whose notices then complete writes.
        guard let store = self.core.store else { return jobs }
        while true {
            store.writer.waitUntilIdle()
            guard self.core.loop.statistics.queuedJobs > 0 else { return jobs }
            jobs += self.core.loop.drain()
        }
    }

    /// Runs the loop on the calling thread until ``close()`` is called (from a callback or another
    /// thread) or the process receives SIGINT (Ctrl-C) or SIGTERM; then closes the database.
    /// Only for databases created with ``LoopMode/callerThread``.
    public func run() throws(DatabaseError) {
        guard self.loopMode == .callerThread else {
            throw DatabaseError(
                .ioError, "run() needs a database created with loopMode .callerThread; this one's loop is driven otherwise.")
        }
        do {
            try self.core.loop.run(stopOn: [SIGINT, SIGTERM])
        } catch {
            throw DatabaseError(.ioError, "Could not run the database loop: \(error)")
        }
        self.core.close()
    }

    /// Closes the database: observers' cancel blocks receive a `.closed` error, queued work
    /// finishes, and the loop thread stops. Later operations fail with `.closed`.
    ///
    /// - Complexity: O(*r*) on the loop for *r* observers (each cancel block runs), after the work already
    ///   queued; then it waits for the loop to stop (a database opened at a path first syncs its journal).
    public func close() {
        self.core.close()
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { self.core.isClosed }
}
