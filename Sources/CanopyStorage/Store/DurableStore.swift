package import CanopyCore
package import Logging
import Synchronization

/// The loop-thread side of a database kept on disk: hands every applied write to the journal,
/// completes writes once the journal reports them durable, undoes writes the journal failed,
/// and writes checkpoints in the background.
// @unchecked Sendable: every stored property is used on the loop thread only, except the
// immutable ones and `channel` (atomics); jobs that capture the store run on the loop.
package final class DurableStore: @unchecked Sendable {
    struct Pending {
        var sequence: UInt64
        var completion: (@Sendable (DatabaseError?) -> Void)?
    }

    /// The tree right after write `sequence`, taken each time records go to the journal thread
    /// (once per loop turn, not per write, so later writes rarely copy nodes to keep it). The
    /// journal fails whole batches, which start right after such a point: undoing restores one.
    struct Snapshot {
        var sequence: UInt64
        var root: Node
    }

    /// How a durable store is set up (from the database's configuration).
    package struct Options: Sendable {
        /// The journal size, in bytes, past which a checkpoint is written in the background.
        package var checkpointThreshold: Int
        /// When the journal syncs, and so when write completions fire.
        package var journalPolicy: JournalWriter.Policy
        /// What the journal's periodic sync measures its interval with.
        package var journalClock: any JournalClock
        /// Where opening repairs and journal failures are reported.
        package var logger: Logger

        package init(
            checkpointThreshold: Int, journalPolicy: JournalWriter.Policy, journalClock: any JournalClock = SystemJournalClock(),
            logger: Logger
        ) {
            self.checkpointThreshold = checkpointThreshold
            self.journalPolicy = journalPolicy
            self.journalClock = journalClock
            self.logger = logger
        }
    }

    /// Where the store is kept, for messages: its directory, or a cluster namespace's name.
    package let directory: String
    /// The local directory's lock (`nil` for a store whose sink is not a directory).
    let lock: DirectoryLock?
    /// Where writes become durable and checkpoints are kept.
    package let writer: any JournalSink
    let channel: JournalChannel
    let loop: any StoreLoop
    package let checkpointThreshold: Int
    let logger: Logger

    // Unchecked exclusivity (`nextSequence`, `pending`, `pendingHead`, `buffer`, `broken`,
    // `closed`): every change is an assignment, append or removal that calls nothing, and the
    // completions are called after their entry was read out, so the dynamic checks (several on
    // every write) cannot fail.
    @exclusivity(unchecked) package internal(set) var nextSequence: UInt64
    @exclusivity(unchecked) var pending: [Pending] = []
    @exclusivity(unchecked) var pendingHead = 0
    /// Writes of this loop turn, not yet handed to the journal thread (which encodes them).
    @exclusivity(unchecked) var buffer: [JournalRecord] = []
    var flushScheduled = false
    var snapshots: [Snapshot]
    /// The journal's size after the current segment's start (or, at opening, what recovery
    /// found), and the writer's ``JournalSink/encodedByteCount`` then.
    var journalBase: (bytes: Int, encoded: Int)
    package internal(set) var checkpointSequence: UInt64
    package internal(set) var checkpointBytes: Int
    /// Whether a checkpoint is being written (one at a time).
    var checkpointRunning = false
    var checkpointWaiters: [@Sendable (DatabaseError?) -> Void] = []
    @exclusivity(unchecked) package internal(set) var broken: DatabaseError?
    package let recoveryNotes: [String]
    package let replayedRecords: Int
    @exclusivity(unchecked) var closed = false
    /// Undoes failed writes (restores this tree); set by the core right after creation.
    package var undo: ((Node) -> Void)?
    /// Set by the core: the tree now.
    package var currentRoot: (() -> Node)?
    /// The tree recovery loaded, until the core takes it.
    package var openedRoot: Node

    /// What a store starts from: the tree its sink holds and the positions in it.
    package struct Start {
        package var root: Node
        /// The sequence number of the last write in `root`.
        package var lastSequence: UInt64
        /// The sequence number the newest checkpoint covers (0 without one).
        package var checkpointSequence: UInt64
        package var checkpointBytes: Int
        /// The records' bytes after the checkpoint (where a new checkpoint counts from).
        package var journalBytes: Int
        package var replayedRecords: Int
        package var notes: [String]

        package init(
            root: Node, lastSequence: UInt64, checkpointSequence: UInt64, checkpointBytes: Int, journalBytes: Int, replayedRecords: Int,
            notes: [String] = []
        ) {
            self.root = root
            self.lastSequence = lastSequence
            self.checkpointSequence = checkpointSequence
            self.checkpointBytes = checkpointBytes
            self.journalBytes = journalBytes
            self.replayedRecords = replayedRecords
            self.notes = notes
        }
    }

    /// A store kept by the sink `makeSink` creates (given the callbacks it reports through),
    /// starting from `start`; `name` names it in messages.
    package init(
        name: String, lock: DirectoryLock? = nil, start: Start, loop: any StoreLoop, options: Options,
        makeSink: (JournalWriter.Callbacks) -> any JournalSink
    ) {
        self.directory = name
        self.lock = lock
        self.loop = loop
        self.checkpointThreshold = options.checkpointThreshold
        self.logger = options.logger
        self.nextSequence = start.lastSequence &+ 1
        self.journalBase = (start.journalBytes, 0)
        self.checkpointSequence = start.checkpointSequence
        self.checkpointBytes = start.checkpointBytes
        self.recoveryNotes = start.notes
        self.replayedRecords = start.replayedRecords
        self.openedRoot = start.root
        self.snapshots = [Snapshot(sequence: start.lastSequence, root: start.root)]
        let channel = JournalChannel(loop: loop)
        self.channel = channel
        self.writer = makeSink(
            JournalWriter.Callbacks(
                durable: { [channel] sequence in channel.durable(sequence) },
                failed: { [channel] first, error, broken in channel.failed(first, error, broken) }))
        channel.store.withLock { $0 = Unowned(self) }
    }

    /// Opens (creating and locking) the database directory at `directory`; the store's
    /// loop-thread-only work runs on `loop`.
    package static func open(directory: String, loop: any StoreLoop, options: Options, io: any FileIO = POSIXFileIO()) throws(DatabaseError)
        -> DurableStore
    {
        try FileReader.createDirectory(directory)
        let lock = try DirectoryLock(directory: directory)
        let files = StorageFiles(io: io)
        do throws(DatabaseError) {
            let opened = try StorageRecovery(directory: directory, files: files).open()
            for note in opened.start.notes {
                options.logger.warning("Opening \(directory): \(note)", metadata: ["database": "\(directory)"])
            }
            return DurableStore(name: directory, lock: lock, start: opened.start, loop: loop, options: options) { callbacks in
                JournalWriter(
                    directory: directory, files: files, policy: options.journalPolicy, segmentPath: opened.segmentPath,
                    fd: opened.segmentFD, offset: opened.segmentOffset, lastSequence: opened.start.lastSequence,
                    clock: options.journalClock,
                    callbacks: callbacks)
            }
        } catch {
            lock.release()
            throw error
        }
    }

    /// The journal's size since the checkpoint: what the journal thread has encoded so far (it
    /// lags behind writes not yet handed over; exact once they are durable). Loop thread.
    package var journalBytes: Int {
        self.journalBase.bytes + self.writer.encodedByteCount - self.journalBase.encoded
    }

    /// The error every write gets while the journal refuses writes (loop thread).
    package var refusal: DatabaseError? { self.closed ? .databaseClosed : self.broken }

    /// Writes applied but not yet durable (loop thread).
    package var pendingCount: Int { self.pending.count - self.pendingHead }
}
