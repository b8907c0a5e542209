package import CanopyCore
import Logging

extension DurableStore {

    /// Journals `write`, just applied in memory at time `now`; `completion` fires once it is
    /// durable or failed. The write goes to the journal thread at the end of the loop turn,
    /// together with the other writes of the turn; that thread encodes it.
    package func record(_ write: WriteOperation, now: Int64, completion: (@Sendable (DatabaseError?) -> Void)?) {
        self.loop.assertOnLoop()
        let sequence = self.nextSequence
        self.nextSequence &+= 1
        self.buffer.append(JournalRecord(write, sequence: sequence, now: now))
        self.pending.append(Pending(sequence: sequence, completion: completion))
        if self.buffer.count >= Self.flushBatch {
            // A loop that runs behind its producers has many writes queued before the scheduled
            // flush: hand them over in bounded batches, so the journal thread encodes records
            // still in cache and durability does not wait for the whole backlog.
            self.handOver()
        } else if !self.flushScheduled {
            self.flushScheduled = true
            // Runs after the jobs already queued (on the loop thread this never blocks).
            if !self.loop.execute({ [self] in self.flush() }) { self.flush() }
        }
        if self.journalBytes >= self.checkpointThreshold && !self.checkpointRunning {
            self.startCheckpoint()
        }
    }

    /// The most records buffered before they go to the journal thread without waiting for the
    /// scheduled flush.
    static var flushBatch: Int { 256 }

    /// Hands the buffered records to the journal thread and remembers the tree they lead to.
    package func flush() {
        self.loop.assertOnLoop()
        self.flushScheduled = false
        self.handOver()
    }

    /// Hands the buffered records over now (the scheduled flush, if any, still runs).
    private func handOver() {
        guard !self.buffer.isEmpty else { return }
        let records = self.buffer
        self.buffer = []
        self.buffer.reserveCapacity(min(records.count, 1 << 16))
        if let root = self.currentRoot?() { self.snapshots.append(Snapshot(sequence: records[records.count - 1].sequence, root: root)) }
        self.writer.append(writes: records)
    }

    /// Completes every pending write up to `sequence` (loop thread).
    func completeThrough(_ sequence: UInt64) {
        self.loop.assertOnLoop()
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
        self.loop.assertOnLoop()
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
                failure = DatabaseError(
                    .ioError,
                    "The journal is unusable: \(error.message) The state before the failed writes could not be restored; reopen the database."
                )
            }
            self.nextSequence = firstFailed
            self.snapshots.removeAll { $0.sequence >= firstFailed }
        }
        if broken { self.broken = failure }
        self.logger.error("The journal of \(self.directory) failed \(failed.count) write(s): \(failure.message)")
        for entry in failed { entry.completion?(failure) }
        if !broken { self.writer.resume() }
    }

    func compactPending() {
        self.pending.compactConsumed(head: &self.pendingHead)
    }
}
