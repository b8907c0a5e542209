package import CanopyCore

extension JournalWriter {
    /// The journal writer's lifecycle, shared by the owner and the writer thread (under the
    /// writer's lock): what is queued, whether the writer thread holds a batch, whether the
    /// journal accepts writes, and how it ends. Each transition returns what its caller must do;
    /// nothing here blocks, writes or calls back.
    ///
    /// ```
    /// health: accepting ──a batch failed──▶ failed ──resume()──▶ accepting
    ///         accepting, failed ──recovering failed too──▶ broken (final)
    /// phase:  waiting ──takeBatch──▶ writing ──batchDone──▶ waiting
    ///         waiting ──close()──▶ closeRequested ──takeBatch──▶ writingFinal ──batchDone──▶ finished
    ///         writing ──close()──▶ closeRequested(writing) ──batchDone──▶ closeRequested
    /// ```
    package struct StateMachine {
        /// Whether the journal takes what the owner hands over.
        package enum Health: Equatable {
            case accepting
            /// A batch failed: appends are dropped until the owner, having undone the lost
            /// writes, calls ``JournalWriter/resume()``.
            case failed
            /// Even recovering failed: every write is refused from now on.
            case broken(DatabaseError)
        }

        /// What the writer thread is doing.
        package enum Phase: Equatable {
            case waiting
            case writing
            /// ``JournalWriter/close()`` was called (`writing`: while an ordinary batch was out);
            /// the final batch, synced whatever the policy, is still to be written.
            case closeRequested(writing: Bool)
            /// The final batch is out.
            case writingFinal
            /// Closed: the thread has stopped.
            case finished
        }

        /// What a hand-over (an append or a rotation) leads to.
        package enum HandOver: Equatable {
            /// Queued: wake the writer thread.
            case queued
            /// Dropped, for this reason (nothing was queued).
            case dropped(DatabaseError)
        }

        /// What the writer thread does next.
        enum Step {
            /// Nothing to do: wait until woken (or until a periodic sync falls due).
            case wait
            /// Write this batch (never empty unless a sync or the close is due), syncing it when
            /// `forceSync`.
            case write([Chunk], forceSync: Bool)
        }

        package private(set) var health: Health = .accepting
        package private(set) var phase: Phase = .waiting
        private(set) var chunks: [Chunk] = []
        /// Records written but not yet synced (`periodic` and `never`).
        package private(set) var unsynced = false
        /// When the last sync ran (the journal clock's nanoseconds).
        package private(set) var lastSync: UInt64

        package init(now: UInt64) { self.lastSync = now }

        /// Why a hand-over is refused now, if it is.
        private var refusal: DatabaseError? {
            switch (self.health, self.phase) {
            case (.broken(let error), _): return error
            case (.failed, _): return DatabaseError(.ioError, "The journal is recovering from a failure and is not accepting writes.")
            case (_, .closeRequested), (_, .writingFinal), (_, .finished): return DatabaseError(.ioError, "The journal is closed.")
            case (.accepting, .waiting), (.accepting, .writing): return nil
            }
        }

        /// Queues `chunk` after everything handed over before, merging it into the last chunk of
        /// the same kind.
        mutating func handOver(_ chunk: Chunk) -> HandOver {
            if let refusal = self.refusal { return .dropped(refusal) }
            switch (self.chunks.last, chunk) {
            case (.records(var existing, _)?, .records(let bytes, let last)):
                self.chunks.removeLast()
                existing.append(contentsOf: bytes)
                self.chunks.append(.records(existing, last: last))
            case (.writes(var existing)?, .writes(let writes)):
                self.chunks.removeLast()
                existing.append(contentsOf: writes)
                self.chunks.append(.writes(existing))
            default:
                self.chunks.append(chunk)
            }
            return .queued
        }

        /// The owner undid a failure's lost writes: accept again (a broken journal stays broken).
        package mutating func resume() {
            if self.health == .failed { self.health = .accepting }
        }

        /// The owner closes the journal; `true` when the writer thread must be woken.
        package mutating func close() -> Bool {
            switch self.phase {
            case .waiting:
                self.phase = .closeRequested(writing: false)
                return true
            case .writing:
                self.phase = .closeRequested(writing: true)
                return true
            case .closeRequested, .writingFinal, .finished:
                return false
            }
        }

        /// Whether a periodic sync is due at `now`: unsynced records have waited `interval` (not
        /// while a failure awaits ``resume()`` or once broken: nothing would be synced).
        package func periodicSyncDue(interval: UInt64?, now: UInt64) -> Bool {
            guard let interval, self.unsynced, self.health == .accepting else { return false }
            return now &- self.lastSync >= interval
        }

        /// Whether the writer thread has something to do: queued chunks or a periodic sync due
        /// (while waiting), or the final batch (once closing).
        func hasWork(syncInterval: UInt64?, now: UInt64) -> Bool {
            switch self.phase {
            case .waiting: return !self.chunks.isEmpty || self.periodicSyncDue(interval: syncInterval, now: now)
            case .closeRequested(writing: false): return true
            case .writing, .closeRequested(writing: true), .writingFinal, .finished: return false
            }
        }

        /// The writer thread asks for work: the queued chunks (all of them: group commit), or
        /// `wait` when there is nothing to write, sync or close.
        mutating func takeBatch(syncInterval: UInt64?, now: UInt64) -> Step {
            let syncDue = self.periodicSyncDue(interval: syncInterval, now: now)
            switch self.phase {
            case .waiting:
                if self.chunks.isEmpty && !syncDue { return .wait }
                self.phase = .writing
            case .closeRequested(writing: false):
                self.phase = .writingFinal
            case .writing, .closeRequested(writing: true), .writingFinal, .finished:
                preconditionFailure("takeBatch while \(self.phase)")
            }
            var batch: [Chunk] = []
            swap(&batch, &self.chunks)
            return .write(batch, forceSync: self.phase == .writingFinal || syncDue)
        }

        /// The writer thread wrote its batch; `true` when it must stop (closing, nothing left).
        mutating func batchDone() -> Bool {
            switch self.phase {
            case .writing:
                self.phase = .waiting
                return false
            case .closeRequested(writing: true):
                self.phase = .closeRequested(writing: false)
                return false
            case .writingFinal:
                self.phase = .finished
                return true
            case .waiting, .closeRequested(writing: false), .finished:
                preconditionFailure("batchDone while \(self.phase)")
            }
        }

        /// Records were written without a sync.
        mutating func wroteUnsynced() { self.unsynced = true }

        /// Everything written is synced, at `now`.
        mutating func synced(now: UInt64) {
            self.unsynced = false
            self.lastSync = now
        }

        /// A batch failed (`broken`: recovering failed too): stop accepting, and return the chunks
        /// queued behind it, which are dropped (their rotations must be told).
        mutating func failed(broken: DatabaseError?) -> [Chunk] {
            if case .broken = self.health {
            } else {
                self.health = broken.map { .broken($0) } ?? .failed
            }
            var dropped: [Chunk] = []
            swap(&dropped, &self.chunks)
            return dropped
        }

        /// Whether everything handed over has been written and reported (for ``JournalWriter/waitUntilIdle()``).
        func isIdle(syncInterval: UInt64?, now: UInt64) -> Bool {
            switch self.phase {
            case .writing, .closeRequested(writing: true), .writingFinal: return false
            case .waiting, .closeRequested(writing: false), .finished:
                return self.chunks.isEmpty && !self.periodicSyncDue(interval: syncInterval, now: now)
            }
        }

        /// The number of chunks queued (for tests).
        package var queuedChunks: Int { self.chunks.count }
    }
}
