package import CanopyCore
import Foundation
package import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Appends framed records to the journal on its own thread, with group commit: every record
/// handed over while a write or `fsync` runs goes out in the next batch, under one `fsync`.
///
/// The owner (the database loop) appends records in sequence order and learns, through the
/// callbacks (called on the writer thread), how far the journal is durable, or that a batch
/// failed. After a failure the writer truncates the segment back to the last good record and
/// drops appends until ``resume()``; if even that fails it is *broken* and refuses everything.
// @unchecked Sendable: all mutable state is in `state` (a ConditionLock) or confined to the
// writer thread (`fd`, `segmentPath`, `goodOffset`, `writtenOffset`, the sequence fields).
package final class JournalWriter: @unchecked Sendable {
    /// How the writer reports progress; called on the writer thread.
    package struct Callbacks: Sendable {
        /// Records up to and including this sequence number are durable under the policy.
        package var durable: @Sendable (UInt64) -> Void
        /// Records from this sequence number on are lost: the owner must fail them and undo them.
        /// `broken` means the journal refuses all further writes.
        package var failed: @Sendable (_ firstFailed: UInt64, _ error: DatabaseError, _ broken: Bool) -> Void
        package init(durable: @escaping @Sendable (UInt64) -> Void, failed: @escaping @Sendable (UInt64, DatabaseError, Bool) -> Void) {
            self.durable = durable
            self.failed = failed
        }
    }

    package enum Policy: Sendable, Equatable {
        case always
        case periodic(nanoseconds: UInt64)
        case never
    }

    enum Chunk {
        case records([UInt8], last: UInt64)
        /// Writes to encode here, on the writer thread (never empty).
        case writes([JournalRecord])
        case rotate(firstSequence: UInt64, done: @Sendable (DatabaseError?) -> Void)
    }

    package let directory: String
    let files: StorageFiles
    let policy: Policy
    let callbacks: Callbacks
    /// What the periodic sync measures its interval with.
    let clock: any JournalClock
    /// The lifecycle (``StateMachine``), under the lock both threads take.
    private let state: ConditionLock<StateMachine>
    /// The bytes of the records this writer has encoded from writes handed over with
    /// ``append(writes:)`` (written on the writer thread, read from any).
    package let encodedBytes = Atomic<Int>(0)

    // Writer thread only (set up before the thread starts).
    private var fd: Int32
    private var segmentPath: String
    /// End of the last record reported durable (or, under `periodic`/`never`, written).
    private var goodOffset: Int
    private var goodSequence: UInt64
    private var writtenOffset: Int
    private var writtenSequence: UInt64
    /// Whether the failure being recovered from was an `fsync`.
    private var syncFailed = false

    /// Starts writing to the segment at `segmentPath`, already open for appending at `offset`,
    /// whose last record is `lastSequence`; a periodic sync measures its interval on `clock`.
    package init(
        directory: String, files: StorageFiles, policy: Policy, segmentPath: String, fd: Int32, offset: Int, lastSequence: UInt64,
        clock: any JournalClock = SystemJournalClock(), callbacks: Callbacks
    ) {
        self.directory = directory
        self.files = files
        self.policy = policy
        self.clock = clock
        self.callbacks = callbacks
        self.fd = fd
        self.segmentPath = segmentPath
        self.goodOffset = offset
        self.goodSequence = lastSequence
        self.writtenOffset = offset
        self.writtenSequence = lastSequence
        self.state = ConditionLock(StateMachine(now: clock.now()))
        clock.onAdvance { [weak self] in self?.state.broadcast() }
        let thread = Thread { [self] in self.run() }
        thread.name = "canopy-journal"
        thread.start()
    }

    // MARK: - Owner side (any one thread, in sequence order)

    /// Hands over framed records ending with record `last`; `false` when they were dropped
    /// (after a failure, before ``resume()``, or when broken or closing).
    @discardableResult
    package func append(_ bytes: [UInt8], last: UInt64) -> Bool {
        self.handOver(.records(bytes, last: last)) == .queued
    }

    /// Hands over writes, in sequence order after everything handed over before, to encode as
    /// records on the writer thread (keeping the encoding off the owner's thread); `false` when
    /// they were dropped (as ``append(_:last:)``).
    @discardableResult
    package func append(writes: [JournalRecord]) -> Bool {
        guard !writes.isEmpty else { return true }
        return self.handOver(.writes(writes)) == .queued
    }

    /// After the records appended so far: sync and close the current segment and start a new one
    /// whose first record is `firstSequence`; `done` runs on the writer thread.
    package func rotate(firstSequence: UInt64, done: @escaping @Sendable (DatabaseError?) -> Void) {
        if case .dropped(let reason) = self.handOver(.rotate(firstSequence: firstSequence, done: done)) { done(reason) }
    }

    /// Queues `chunk` and wakes the writer thread, unless the state machine refuses it.
    private func handOver(_ chunk: Chunk) -> StateMachine.HandOver {
        let outcome = self.state.withLock { $0.handOver(chunk) }
        if outcome == .queued { self.state.broadcast() }
        return outcome
    }

    /// Accepts appends again after a failure the owner has undone.
    package func resume() {
        self.state.withLock { $0.resume() }
    }

    /// Why the journal refuses every write, if it does.
    package var brokenError: DatabaseError? {
        self.state.withLock { state in
            if case .broken(let error) = state.health { return error }
            return nil
        }
    }

    /// Blocks until everything handed over has been written (and reported), and a periodic sync
    /// that is due has run.
    package func waitUntilIdle() {
        self.state.withLock(waitingWhile: { !$0.isIdle(syncInterval: self.syncInterval, now: self.clock.now()) }) { _ in }
    }

    /// Writes what is left, syncs (whatever the policy), closes the file and stops the thread.
    /// Blocks until done.
    package func close() {
        if self.state.withLock({ $0.close() }) { self.state.broadcast() }
        self.state.withLock(waitingWhile: { $0.phase != .finished }) { _ in }
    }

    // MARK: - Writer thread

    private func run() {
        while true {
            let step = self.state.withLock(
                waitingWhile: { !$0.hasWork(syncInterval: self.syncInterval, now: self.clock.now()) }, deadline: self.nextDeadline()
            ) { $0.takeBatch(syncInterval: self.syncInterval, now: self.clock.now()) }
            // A wait that ended at the periodic deadline with nothing due yet: wait again.
            guard case .write(let batch, let forceSync) = step else { continue }
            self.write(batch, forceSync: forceSync)
            let finished = self.state.withLock { $0.batchDone() }
            self.state.broadcast()
            if finished {
                self.files.io.close(self.fd)
                return
            }
        }
    }

    /// The periodic sync's interval (`nil` under the other policies).
    private var syncInterval: UInt64? {
        if case .periodic(let interval) = self.policy { return interval }
        return nil
    }

    /// When (on `CLOCK_MONOTONIC`) the writer thread wakes by itself for a periodic sync.
    private func nextDeadline() -> UInt64 {
        guard let interval = self.syncInterval else { return UInt64.max / 2 }
        return self.clock.monotonicDeadline(reaching: self.state.withLock { $0.lastSync } &+ interval)
    }

    /// Writes one batch and reports it.
    private func write(_ batch: [Chunk], forceSync: Bool) {
        if self.brokenError != nil {
            for case .rotate(_, let done) in batch { done(DatabaseError(.ioError, "The journal is broken.")) }
            return
        }
        do throws(DatabaseError) {
            for chunk in batch {
                switch chunk {
                case .records(let bytes, let last):
                    try self.writeRecords(bytes, last: last)
                case .writes(let writes):
                    var bytes: [UInt8] = []
                    for record in writes {
                        JournalFormat.appendRecord(record.write, sequence: record.sequence, now: record.now, to: &bytes)
                    }
                    self.encodedBytes.add(bytes.count, ordering: .relaxed)
                    try self.writeRecords(bytes, last: writes[writes.count - 1].sequence)
                case .rotate(let first, let done):
                    do throws(DatabaseError) {
                        try self.startSegment(firstSequence: first)
                        done(nil)
                    } catch {
                        done(error)
                        throw error
                    }
                }
            }
            let wrote = self.writtenSequence != self.goodSequence
            switch self.policy {
            case .always:
                if wrote || forceSync { try self.sync() }
            case .periodic, .never:
                if forceSync { try self.sync() } else if wrote { self.state.withLock { $0.wroteUnsynced() } }
            }
            self.goodOffset = self.writtenOffset
            if wrote {
                self.goodSequence = self.writtenSequence
                self.callbacks.durable(self.goodSequence)
            }
        } catch {
            self.recover(from: error)
        }
    }

    /// Writes framed records ending with record `last` at the end of the segment.
    private func writeRecords(_ bytes: [UInt8], last: UInt64) throws(DatabaseError) {
        try bytes.withBytes { raw throws(DatabaseError) in try self.files.writeAll(self.fd, raw, path: self.segmentPath) }
        self.writtenOffset += bytes.count
        self.writtenSequence = last
    }

    private func sync() throws(DatabaseError) {
        do throws(DatabaseError) {
            try self.files.sync(self.fd, path: self.segmentPath)
        } catch {
            self.syncFailed = true
            throw error
        }
        self.state.withLock { $0.synced(now: self.clock.now()) }
    }

    /// After a failed write or sync: cut the segment back to the last good record, make that
    /// durable, and tell the owner which records are lost.
    private func recover(from error: DatabaseError) {
        let firstFailed = self.goodSequence &+ 1
        var broken: DatabaseError?
        // Under `periodic`/`never`, records reported written may sit unsynced in the page cache:
        // after a failed fsync the kernel may have dropped them, so nothing can be promised.
        let syncFailed = self.syncFailed
        self.syncFailed = false
        if syncFailed && self.policy != .always && self.state.withLock({ $0.unsynced }) {
            broken = DatabaseError(
                .ioError,
                "The journal is unusable: \(error.message) Writes acknowledged since the last sync may be lost; reopen the database.")
        } else {
            do throws(DatabaseError) {
                try self.files.truncate(self.fd, to: self.goodOffset, path: self.segmentPath)
                try self.files.sync(self.fd, path: self.segmentPath)
            } catch let second {
                broken = DatabaseError(.ioError, "The journal is unusable: \(error.message) Then: \(second.message)")
            }
        }
        self.writtenOffset = self.goodOffset
        self.writtenSequence = self.goodSequence
        let dropped = self.state.withLock { $0.failed(broken: broken) }
        for case .rotate(_, let done) in dropped { done(error) }
        self.callbacks.failed(firstFailed, broken ?? error, broken != nil)
    }

    /// Syncs and closes the current segment, then creates the next one with its header.
    private func startSegment(firstSequence: UInt64) throws(DatabaseError) {
        try self.files.sync(self.fd, path: self.segmentPath)
        let path = self.directory + "/" + JournalFormat.segmentName(firstSequence: firstSequence)
        let fd = try self.files.openForAppend(path)
        do throws(DatabaseError) {
            try self.files.truncate(fd, to: 0, path: path)
            let header = JournalFormat.header(firstSequence: firstSequence)
            try header.withBytes { raw throws(DatabaseError) in try self.files.writeAll(fd, raw, path: path) }
            try self.files.sync(fd, path: path)
            try self.files.syncDirectory(self.directory)
        } catch {
            self.files.io.close(fd)
            _ = self.files.io.unlink(path)
            throw error
        }
        self.files.io.close(self.fd)
        self.fd = fd
        self.segmentPath = path
        self.goodOffset = JournalFormat.headerSize
        self.writtenOffset = JournalFormat.headerSize
        // Everything before the new segment is synced now.
        self.goodSequence = firstSequence &- 1
        self.writtenSequence = firstSequence &- 1
        self.callbacks.durable(self.goodSequence)
        self.state.withLock { $0.synced(now: self.clock.now()) }
    }
}
