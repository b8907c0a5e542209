import CanopyCore
import CanopyLoop
import CanopyStorage
import Logging
import Synchronization

/// The loop-thread side of a database kept on disk: hands every applied write to the journal,
/// completes writes once the journal reports them durable, undoes writes the journal failed,
/// and writes checkpoints in the background.
// @unchecked Sendable: every stored property is used on the loop thread only, except the
// immutable ones and `channel` (atomics); jobs that capture the store run on the loop.
final class DurableStore: @unchecked Sendable {
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

    let directory: String
    let files: StorageFiles
    let lock: DirectoryLock
    let writer: JournalWriter
    let channel: JournalChannel
    let loop: EventLoop
    let checkpointThreshold: Int
    let syncPolicy: SyncPolicy
    let logger: Logger

    private(set) var nextSequence: UInt64
    private var pending: [Pending] = []
    private var pendingHead = 0
    /// Records of this loop turn, not yet handed to the journal thread.
    private var buffer: [UInt8] = []
    private var bufferedLast: UInt64 = 0
    private var flushScheduled = false
    private var snapshots: [Snapshot]
    private(set) var journalBytes: Int
    private(set) var checkpointSequence: UInt64
    private(set) var checkpointBytes: Int
    /// Whether a checkpoint is being written (one at a time).
    private var checkpointRunning = false
    private var checkpointWaiters: [@Sendable (DatabaseError?) -> Void] = []
    private(set) var broken: DatabaseError?
    let recoveryNotes: [String]
    let replayedRecords: Int
    private var closed = false
    /// Undoes failed writes (restores this tree); set by the core right after creation.
    var undo: ((Node) -> Void)?
    /// The tree recovery loaded, until the core takes it.
    var openedRoot: Node

    init(directory: String, lock: DirectoryLock, opened: StorageRecovery.Opened, files: StorageFiles, loop: EventLoop, configuration: Database.Configuration) {
        self.directory = directory
        self.files = files
        self.lock = lock
        self.loop = loop
        self.checkpointThreshold = configuration.checkpointThreshold
        self.syncPolicy = configuration.syncPolicy
        self.logger = configuration.logger
        self.nextSequence = opened.lastSequence &+ 1
        self.journalBytes = opened.journalBytes
        self.checkpointSequence = opened.checkpointSequence
        self.checkpointBytes = opened.checkpointBytes
        self.recoveryNotes = opened.notes
        self.replayedRecords = opened.replayedRecords
        self.openedRoot = opened.root
        self.snapshots = [Snapshot(sequence: opened.lastSequence, root: opened.root)]
        let channel = JournalChannel(loop: loop)
        self.channel = channel
        self.writer = JournalWriter(
            directory: directory, files: files, policy: configuration.syncPolicy.journalPolicy,
            segmentPath: opened.segmentPath, fd: opened.segmentFD, offset: opened.segmentOffset, lastSequence: opened.lastSequence,
            callbacks: JournalWriter.Callbacks(
                durable: { [channel] sequence in channel.durable(sequence) },
                failed: { [channel] first, error, broken in channel.failed(first, error, broken) }))
        channel.store.withLock { $0 = Unowned(self) }
    }

    /// Opens (creating and locking) the database directory at `directory`.
    static func open(directory: String, loop: EventLoop, configuration: Database.Configuration, io: any FileIO = POSIXFileIO()) throws(DatabaseError) -> DurableStore {
        try FileReader.createDirectory(directory)
        let lock = try DirectoryLock(directory: directory)
        let files = StorageFiles(io: io)
        do throws(DatabaseError) {
            let opened = try StorageRecovery(directory: directory, files: files).open()
            for note in opened.notes {
                configuration.logger.warning("Opening \(directory): \(note)", metadata: ["database": "\(directory)"])
            }
            return DurableStore(directory: directory, lock: lock, opened: opened, files: files, loop: loop, configuration: configuration)
        } catch {
            lock.release()
            throw error
        }
    }

    // MARK: - Writing

    /// The error every write gets while the journal refuses writes.
    var refusal: DatabaseError? { self.closed ? DatabaseCore.closedError : self.broken }

    /// Journals `write`, just applied in memory at time `now`; `completion` fires once it is
    /// durable or failed. The record goes to the journal thread at the end of the loop turn,
    /// together with the other writes of the turn.
    func record(_ write: WriteOperation, now: Int64, completion: (@Sendable (DatabaseError?) -> Void)?) {
        let sequence = self.nextSequence
        self.nextSequence &+= 1
        let before = self.buffer.count
        JournalFormat.appendRecord(write, sequence: sequence, now: now, to: &self.buffer)
        self.bufferedLast = sequence
        self.journalBytes += self.buffer.count - before
        self.pending.append(Pending(sequence: sequence, completion: completion))
        if !self.flushScheduled {
            self.flushScheduled = true
            // Runs after the jobs already queued (on the loop thread this never blocks).
            if !self.loop.execute({ [self] in self.flush() }) { self.flush() }
        }
        if self.journalBytes >= self.checkpointThreshold && !self.checkpointRunning {
            self.startCheckpoint()
        }
    }

    /// Hands the buffered records to the journal thread and remembers the tree they lead to.
    func flush() {
        self.flushScheduled = false
        guard !self.buffer.isEmpty else { return }
        let records = self.buffer
        self.buffer = []
        self.buffer.reserveCapacity(min(records.count, 1 << 20))
        if let root = self.currentRoot?() { self.snapshots.append(Snapshot(sequence: self.bufferedLast, root: root)) }
        self.writer.append(records, last: self.bufferedLast)
    }

    /// Completes every pending write up to `sequence` (loop thread).
    func completeThrough(_ sequence: UInt64) {
        while self.pendingHead < self.pending.count && self.pending[self.pendingHead].sequence <= sequence {
            let completion = self.pending[self.pendingHead].completion
            self.pending[self.pendingHead].completion = nil
            self.pendingHead += 1
            completion?(nil)
        }
        self.compactPending()
        // Keep the newest snapshot at or before the durable point, and the later ones.
        var drop = 0
        while drop + 1 < self.snapshots.count && self.snapshots[drop + 1].sequence <= sequence { drop += 1 }
        if drop > 0 { self.snapshots.removeFirst(drop) }
    }

    /// The journal lost every write from `firstFailed` on: undo them in memory (observers see
    /// the data go back), fail their completions, and go on from the last durable write.
    func journalFailed(from firstFailed: UInt64, error: DatabaseError, broken: Bool) {
        self.completeThrough(self.channel.acknowledged)
        // Records still buffered here follow the failed ones: they fail too.
        self.buffer.removeAll(keepingCapacity: true)
        var failure = error
        var broken = broken
        let failed = Array(self.pending[self.pendingHead...].drop { $0.sequence < firstFailed })
        self.pending.removeLast(failed.count)
        self.compactPending()
        if !failed.isEmpty {
            if let snapshot = self.snapshots.last(where: { $0.sequence == firstFailed &- 1 }) {
                self.undo?(snapshot.root)
            } else if !broken {
                // Never expected: batches start right after a snapshot. Refuse rather than guess.
                broken = true
                failure = DatabaseError(.ioError, "The journal is unusable: \(error.message) The state before the failed writes could not be restored; reopen the database.")
            }
            self.nextSequence = firstFailed
            self.snapshots.removeAll { $0.sequence >= firstFailed }
        }
        if broken { self.broken = failure }
        self.logger.error("The journal of \(self.directory) failed \(failed.count) write(s): \(failure.message)")
        for entry in failed { entry.completion?(failure) }
        if !broken { self.writer.resume() }
    }

    private func compactPending() {
        if self.pendingHead == self.pending.count {
            self.pending.removeAll(keepingCapacity: self.pending.count < 4096)
            self.pendingHead = 0
        } else if self.pendingHead > 1024 && self.pendingHead * 2 > self.pending.count {
            self.pending.removeFirst(self.pendingHead)
            self.pendingHead = 0
        }
    }

    var pendingCount: Int { self.pending.count - self.pendingHead }

    // MARK: - Checkpoints

    /// Writes a checkpoint of the current tree now (after the current one, if one is running);
    /// `completion` fires on the loop thread when it is on disk.
    func checkpoint(root: @escaping () -> Node, completion: @escaping @Sendable (DatabaseError?) -> Void) {
        if let refusal = self.refusal { return completion(refusal) }
        self.checkpointWaiters.append(completion)
        if !self.checkpointRunning { self.startCheckpoint(root: root()) }
    }

    /// Set by the core: the tree now.
    var currentRoot: (() -> Node)?

    private func startCheckpoint(root: Node? = nil) {
        guard let root = root ?? self.currentRoot?() else { return }
        self.flush()  // the records the checkpoint covers go before the rotation
        let sequence = self.nextSequence &- 1
        self.checkpointRunning = true
        self.journalBytes = JournalFormat.headerSize
        let waiters = self.checkpointWaiters
        self.checkpointWaiters = []
        let channel = self.channel
        self.writer.rotate(firstSequence: sequence &+ 1) { error in
            channel.post { store in store.rotated(error: error, root: root, sequence: sequence, waiters: waiters) }
        }
    }

    private func rotated(error: DatabaseError?, root: Node, sequence: UInt64, waiters: [@Sendable (DatabaseError?) -> Void]) {
        if let error {
            self.checkpointRunning = false
            for waiter in waiters { waiter(error) }
            return
        }
        let directory = self.directory
        let files = self.files
        self.loop.runInThreadPool({ () -> Result<Int, DatabaseError> in
            do throws(DatabaseError) {
                return .success(try CheckpointWriter.write(root: root, sequence: sequence, directory: directory, files: files))
            } catch {
                return .failure(error)
            }
        }, then: { [self] result in
            self.checkpointRunning = false
            var failure: DatabaseError?
            switch result {
            case .success(let bytes):
                self.checkpointSequence = sequence
                self.checkpointBytes = bytes
            case .failure(let error):
                failure = error
            }
            for waiter in waiters { waiter(failure) }
            guard !self.closed, self.broken == nil else { return }
            if !self.checkpointWaiters.isEmpty || self.journalBytes >= self.checkpointThreshold { self.startCheckpoint() }
        })
    }

    // MARK: - Closing

    /// Writes and syncs everything, completes the pending writes and stops the journal thread
    /// (loop thread, or any thread once the loop has stopped). The lock is released by
    /// ``releaseLock()`` once the loop (and any checkpoint) has finished.
    func close() {
        guard !self.closed else { return }
        self.flush()
        self.closed = true
        self.writer.close()
        self.completeThrough(self.channel.acknowledged)
        let error = self.broken ?? DatabaseError(.ioError, "The journal could not write this before closing.")
        let left = self.pending[self.pendingHead...]
        self.pending.removeAll()
        self.pendingHead = 0
        for entry in left { entry.completion?(error) }
        let waiters = self.checkpointWaiters
        self.checkpointWaiters = []
        for waiter in waiters { waiter(DatabaseCore.closedError) }
    }

    func releaseLock() {
        self.lock.release()
    }
}

extension SyncPolicy {
    var journalPolicy: JournalWriter.Policy {
        switch self {
        case .always: return .always
        case .never: return .never
        case .periodic(let interval):
            let (seconds, attoseconds) = interval.components
            let nanos = max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
            return .periodic(nanoseconds: UInt64(max(1_000_000, nanos)))
        }
    }
}

/// An unowned reference, so the channel does not keep the store alive.
struct Unowned<Object: AnyObject>: @unchecked Sendable {  // @unchecked: only dereferenced on the loop thread
    unowned let object: Object
    init(_ object: Object) { self.object = object }
}

/// How the journal thread reaches the loop: a coalesced "durable through N" notice (at most one
/// queued at a time) and failure notices, posted without backpressure so the journal thread
/// never waits for a loop that may be waiting for it.
final class JournalChannel: Sendable {
    let loop: EventLoop
    let store = Mutex<Unowned<DurableStore>?>(nil)
    private let acknowledgedSequence = Atomic<UInt64>(0)
    private let noticeQueued = Atomic<Bool>(false)

    init(loop: EventLoop) {
        self.loop = loop
    }

    var acknowledged: UInt64 { self.acknowledgedSequence.load(ordering: .acquiring) }

    /// Runs `body` on the loop thread with the store.
    func post(_ body: @escaping @Sendable (DurableStore) -> Void) {
        guard let store = self.store.withLock({ $0 }) else { return }
        self.loop.executeUnbounded { body(store.object) }
    }

    func durable(_ sequence: UInt64) {
        self.acknowledgedSequence.store(sequence, ordering: .releasing)
        guard !self.noticeQueued.exchange(true, ordering: .acquiringAndReleasing) else { return }
        self.post { [self] store in
            self.noticeQueued.store(false, ordering: .releasing)
            store.completeThrough(self.acknowledged)
        }
    }

    func failed(_ firstFailed: UInt64, _ error: DatabaseError, _ broken: Bool) {
        self.post { store in store.journalFailed(from: firstFailed, error: error, broken: broken) }
    }
}
