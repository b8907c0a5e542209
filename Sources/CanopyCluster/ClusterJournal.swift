package import CanopyCore
package import CanopyStorage
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// The storage seam's cluster side: a leader's ``JournalSink`` that appends each loop turn's
/// records (the local journal's bytes) to its namespace's log in PostgreSQL through a
/// ``LogAppender``, and keeps checkpoints there.
///
/// A write is reported durable only once the batch holding it committed. A failed batch breaks
/// the sink for good: the lease is fenced, or the batch's outcome is unknown; either way this node
/// no longer writes the namespace, which must be opened again (by whichever node leads it).
// @unchecked Sendable: every mutable field is in `state`, a ConditionLock.
package final class ClusterJournal: JournalSink, @unchecked Sendable {
    private struct State {
        /// The last sequence number handed over, and the last one reported durable.
        var handedOver: UInt64
        var durable: UInt64
        var encodedBytes = 0
        var broken: DatabaseError?
        var closed = false
        /// onDisconnect registrations run by the writes of this loop turn (see
        /// ``ClusterJournal/attachOnDisconnect(_:)``).
        var onDisconnect: [Int64] = []
        /// Rotations waiting for everything handed over before them to be durable.
        var rotations: [(through: UInt64, done: @Sendable (DatabaseError?) -> Void)] = []

        var isIdle: Bool { self.broken != nil || self.durable >= self.handedOver }
    }

    package let appender: LogAppender
    private let callbacks: JournalWriter.Callbacks
    private let state: ConditionLock<State>
    /// Called once when the sink breaks (a fenced lease or an unknown outcome), on any thread.
    private let onBroken: @Sendable (DatabaseError) -> Void

    /// - Parameters:
    ///   - appender: The namespace's group commit, whose next position follows `lastSequence`.
    ///   - lastSequence: The log's head when the lease was taken: the store's last write.
    package init(
        appender: LogAppender, lastSequence: UInt64, callbacks: JournalWriter.Callbacks,
        onBroken: @escaping @Sendable (DatabaseError) -> Void
    ) {
        self.appender = appender
        self.callbacks = callbacks
        self.onBroken = onBroken
        self.state = ConditionLock(State(handedOver: lastSequence, durable: lastSequence))
    }

    package func append(writes: [JournalRecord]) -> Bool {
        guard let first = writes.first?.sequence, let last = writes.last?.sequence else { return true }
        var records: [ByteBuffer] = []
        records.reserveCapacity(writes.count)
        var bytes = 0
        var frame: [UInt8] = []
        for write in writes {
            frame.removeAll(keepingCapacity: true)
            JournalFormat.appendRecord(write.write, sequence: write.sequence, now: write.now, to: &frame)
            bytes += frame.count
            records.append(ByteBuffer(bytes: frame))
        }
        let accepted = self.state.withLock { state -> [Int64]? in
            guard state.broken == nil, !state.closed else { return nil }
            state.handedOver = last
            state.encodedBytes += bytes
            defer { state.onDisconnect = [] }
            return state.onDisconnect
        }
        guard let onDisconnect = accepted else { return false }
        self.appender.append(records, runningOnDisconnect: onDisconnect) { [self] result in
            switch result {
            case .success(let position):
                // The appender numbers records from the log's head, as the store does.
                assert(UInt64(position) == last, "ClusterJournal: the log and the store disagree on positions")
                self.committed(through: last)
            case .failure(let error):
                self.failed(from: first, error)
            }
        }
        return true
    }

    private func committed(through last: UInt64) {
        let ready = self.state.withLock { state -> [@Sendable (DatabaseError?) -> Void] in
            guard state.broken == nil else { return [] }
            state.durable = max(state.durable, last)
            let ready = state.rotations.filter { $0.through <= state.durable }.map(\.done)
            state.rotations.removeAll { $0.through <= state.durable }
            return ready
        }
        self.state.broadcast()
        self.callbacks.durable(last)
        for done in ready { done(nil) }
    }

    private func failed(from first: UInt64, _ error: DatabaseError) {
        let waiting = self.state.withLock { state -> [@Sendable (DatabaseError?) -> Void]? in
            guard state.broken == nil else { return nil }
            state.broken = error
            defer { state.rotations = [] }
            return state.rotations.map(\.done)
        }
        self.state.broadcast()
        // Only the first failure counts: it fails every write from `first` on, and nothing after
        // it is ever reported durable.
        guard let waiting else { return }
        self.callbacks.failed(first, error, true)
        for done in waiting { done(error) }
        self.onBroken(error)
    }

    /// The write applied next on the database's loop (in this loop turn) runs the onDisconnect
    /// registrations `ids`: they are deleted in the transaction that appends it, so a write
    /// registered to run when a connection closes runs once, whichever node runs it. Loop thread.
    package func attachOnDisconnect(_ ids: [Int64]) {
        self.state.withLock { $0.onDisconnect += ids }
    }

    package func rotate(firstSequence: UInt64, done: @escaping @Sendable (DatabaseError?) -> Void) {
        let now = self.state.withLock { state -> DatabaseError?? in
            if let broken = state.broken { return .some(broken) }
            if state.durable >= firstSequence &- 1 { return .some(nil) }
            state.rotations.append((firstSequence &- 1, done))
            return .none
        }
        if let outcome = now { done(outcome) }
    }

    /// Calls `done` once every record through `sequence` committed (at once if they have), or
    /// with the error that broke the sink.
    package func whenDurable(through sequence: UInt64, done: @escaping @Sendable (DatabaseError?) -> Void) {
        self.rotate(firstSequence: sequence &+ 1, done: done)
    }

    package func writeCheckpoint(root: Node, sequence: UInt64) throws(DatabaseError) -> Int {
        let bytes = CheckpointFormat.encode(root: root, sequence: sequence)
        let outcome = ConditionLock<Result<Void, DatabaseError>?>(nil)
        let store = self.appender.store
        let lease = self.appender.lease
        Task {
            let result: Result<Void, DatabaseError>
            do throws(DatabaseError) {
                try await store.writeCheckpoint(ByteBuffer(bytes: bytes), through: Int64(sequence), under: lease)
                result = .success(())
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            outcome.broadcast()
        }
        let result = outcome.withLock(waitingWhile: { $0 == nil }) { $0! }
        try result.get()
        return bytes.count
    }

    package func resume() {}

    package var encodedByteCount: Int { self.state.withLock { $0.encodedBytes } }

    package var emptySegmentBytes: Int { 0 }

    package var brokenError: DatabaseError? { self.state.withLock { $0.broken } }

    package func waitUntilIdle() {
        self.state.withLock(waitingWhile: { !$0.isIdle }) { _ in }
    }

    /// Waits for the records handed over to commit (or fail), at most the lease's length (a
    /// PostgreSQL cut off never answers: the store then fails the writes still pending, whose
    /// outcome is unknown), then takes no more.
    package func close() {
        let lease = self.appender.store.configuration.lease.components
        let wait = UInt64(max(0, lease.seconds)) * 1_000_000_000 + UInt64(max(0, lease.attoseconds) / 1_000_000_000)
        self.state.withLock(waitingWhile: { !$0.isIdle }, deadline: Self.monotonicNow() + wait) { $0.closed = true }
        self.appender.close()
    }

    private static func monotonicNow() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}

extension ClusterJournal {
    /// What opens a leader's store for namespace `lease.namespace`: the tree `start` (from
    /// ``ClusterStore/load(_:pageSize:)``), kept in the namespace's log under `lease`; `onBroken`
    /// runs once if the lease is fenced or an append's outcome is lost; `created` gets the journal.
    package static func opener(
        store: ClusterStore, lease: NamespaceLease, start: DurableStore.Start, options: DurableStore.Options,
        created: @escaping @Sendable (ClusterJournal) -> Void = { _ in }, onBroken: @escaping @Sendable (DatabaseError) -> Void
    ) -> (any StoreLoop) -> DurableStore {
        { loop in
            DurableStore(name: "namespace \(lease.namespace)", start: start, loop: loop, options: options) { callbacks in
                let journal = ClusterJournal(
                    appender: LogAppender(store: store, lease: lease, next: Int64(start.lastSequence) + 1),
                    lastSequence: start.lastSequence, callbacks: callbacks, onBroken: onBroken)
                created(journal)
                return journal
            }
        }
    }
}
