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
// @unchecked Sendable: all mutable state is in `state` (a WaitableState) or confined to the
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

    struct State {
        var chunks: [Chunk] = []
        var busy = false
        var closing = false
        var finished = false
        /// Set after a failure until `resume()`: appends are dropped.
        var failed = false
        var broken: DatabaseError?
        var unsynced = false
        var lastSync: UInt64 = 0
    }

    package let directory: String
    let files: StorageFiles
    let policy: Policy
    let callbacks: Callbacks
    /// What the periodic sync measures its interval with.
    let clock: any JournalClock
    private let state = WaitableState(State())
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
        self.state.withLock { $0.lastSync = clock.now() }
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
        let accepted = self.state.withLock { state -> Bool in
            guard !state.failed, state.broken == nil, !state.closing else { return false }
            if case .records(var existing, _)? = state.chunks.last {
                state.chunks.removeLast()
                existing.append(contentsOf: bytes)
                state.chunks.append(.records(existing, last: last))
            } else {
                state.chunks.append(.records(bytes, last: last))
            }
            return true
        }
        if accepted { self.state.broadcast() }
        return accepted
    }

    /// Hands over writes, in sequence order after everything handed over before, to encode as
    /// records on the writer thread (keeping the encoding off the owner's thread); `false` when
    /// they were dropped (as ``append(_:last:)``).
    @discardableResult
    package func append(writes: [JournalRecord]) -> Bool {
        guard !writes.isEmpty else { return true }
        let accepted = self.state.withLock { state -> Bool in
            guard !state.failed, state.broken == nil, !state.closing else { return false }
            if case .writes(var existing)? = state.chunks.last {
                state.chunks.removeLast()
                existing.append(contentsOf: writes)
                state.chunks.append(.writes(existing))
            } else {
                state.chunks.append(.writes(writes))
            }
            return true
        }
        if accepted { self.state.broadcast() }
        return accepted
    }

    /// After the records appended so far: sync and close the current segment and start a new one
    /// whose first record is `firstSequence`; `done` runs on the writer thread.
    package func rotate(firstSequence: UInt64, done: @escaping @Sendable (DatabaseError?) -> Void) {
        let accepted = self.state.withLock { state -> Bool in
            guard !state.failed, state.broken == nil, !state.closing else { return false }
            state.chunks.append(.rotate(firstSequence: firstSequence, done: done))
            return true
        }
        if accepted { self.state.broadcast() } else { done(DatabaseError(.ioError, "The journal is not accepting writes.")) }
    }

    /// Accepts appends again after a failure the owner has undone.
    package func resume() {
        self.state.withLock { $0.failed = false }
    }

    /// Why the journal refuses every write, if it does.
    package var brokenError: DatabaseError? { self.state.withLock { $0.broken } }

    /// Blocks until everything handed over has been written (and reported), and a periodic sync
    /// that is due has run.
    package func waitUntilIdle() {
        self.state.withLock(waitingWhile: { !$0.chunks.isEmpty || $0.busy || self.periodicSyncDue($0) }) { _ in }
    }

    /// Writes what is left, syncs (whatever the policy), closes the file and stops the thread.
    /// Blocks until done.
    package func close() {
        self.state.withLock { $0.closing = true }
        self.state.broadcast()
        self.state.withLock(waitingWhile: { !$0.finished }) { _ in }
    }

    // MARK: - Writer thread

    private func run() {
        while true {
            var batch: [Chunk] = []
            var syncDue = false
            let closing = self.state.withLock(
                waitingWhile: { state in
                    state.chunks.isEmpty && !state.closing && !self.periodicSyncDue(state)
                }, deadline: self.nextDeadline()
            ) { state -> Bool in
                swap(&batch, &state.chunks)
                syncDue = self.periodicSyncDue(state)
                state.busy = true
                return state.closing
            }
            self.write(batch, forceSync: closing || syncDue)
            let finished = self.state.withLock { state -> Bool in
                state.busy = false
                if closing && state.chunks.isEmpty {
                    state.finished = true
                    return true
                }
                return false
            }
            self.state.broadcast()
            if finished {
                self.files.io.close(self.fd)
                return
            }
        }
    }

    /// Whether unsynced records have waited an interval (not while a failure awaits ``resume()``
    /// or once the journal is broken: nothing would be synced, and waiters would wait for it).
    private func periodicSyncDue(_ state: State) -> Bool {
        guard case .periodic(let interval) = self.policy, state.unsynced, !state.failed, state.broken == nil else { return false }
        return self.clock.now() &- state.lastSync >= interval
    }

    /// When (on `CLOCK_MONOTONIC`) the writer thread wakes by itself for a periodic sync.
    private func nextDeadline() -> UInt64 {
        guard case .periodic(let interval) = self.policy else { return UInt64.max / 2 }
        return self.clock.monotonicDeadline(reaching: self.state.withLock { $0.lastSync } &+ interval)
    }

    /// Writes one batch and reports it.
    private func write(_ batch: [Chunk], forceSync: Bool) {
        if self.state.withLock({ $0.broken != nil }) {
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
                if forceSync { try self.sync() } else if wrote { self.state.withLock { $0.unsynced = true } }
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
        self.state.withLock { state in
            state.unsynced = false
            state.lastSync = self.clock.now()
        }
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
        let dropped: [Chunk] = self.state.withLock { state in
            state.failed = true
            if let broken { state.broken = broken }
            var dropped: [Chunk] = []
            swap(&dropped, &state.chunks)
            return dropped
        }
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
        self.state.withLock { state in
            state.unsynced = false
            state.lastSync = self.clock.now()
        }
    }
}
