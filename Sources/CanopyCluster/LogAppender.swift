public import CanopyCore
public import NIOCore
import Synchronization

/// A leader's group commit: appends the records handed to it to its namespace's log, one batch
/// in flight at a time, with every record that arrived meanwhile in the next batch (one statement
/// each, as the local journal thread batches `fsync`). ``append(_:)`` returns once the record's
/// batch committed, never earlier.
public final class LogAppender: Sendable {
    /// Records handed in together, at positions `first`, `first + 1`, …
    private struct Entry {
        var first: Int64
        var records: [ByteBuffer]
        /// onDisconnect registrations these records run: deleted in the transaction that appends them.
        var onDisconnect: [Int64] = []
        /// Called with the last record's position once the batch holding them committed.
        var done: @Sendable (Result<Int64, DatabaseError>) -> Void

        var last: Int64 { self.first + Int64(self.records.count) - 1 }
    }

    private struct Locked {
        var machine = StateMachine<Entry>()
        var next: Int64
    }

    public let store: ClusterStore
    public let lease: NamespaceLease
    private let state: Mutex<Locked>
    private let batches = Atomic<Int>(0)

    /// How many batches committed (each one statement).
    package var batchesCommitted: Int { self.batches.load(ordering: .relaxed) }

    /// - Parameters:
    ///   - next: The position of the first record (the log's head + 1 when the lease was taken).
    public init(store: ClusterStore, lease: NamespaceLease, next: Int64) {
        self.store = store
        self.lease = lease
        self.state = Mutex(Locked(next: next))
    }

    /// Appends `record` and returns its position once its batch committed.
    ///
    /// - Throws: `.notLeader` when the namespace's epoch moved on (this appender fails every
    ///   record from then on: the node must take the lead again with a new appender);
    ///   `.clusterUnavailable` when PostgreSQL failed and the batch's outcome could not be learnt;
    ///   `.closed` after ``close()``.
    public func append(_ record: ByteBuffer) async throws(DatabaseError) -> Int64 {
        let result = await withCheckedContinuation { (waiter: CheckedContinuation<Result<Int64, DatabaseError>, Never>) in
            self.append([record]) { waiter.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Appends `records` (not empty), in order after everything handed in before, and calls
    /// `done` with the last one's position once their batch committed (or with the error that
    /// failed them; any thread).
    /// `onDisconnect`: the onDisconnect registrations whose writes are among `records`, deleted in
    /// the transaction that appends them (so they run once).
    public func append(
        _ records: [ByteBuffer], runningOnDisconnect onDisconnect: [Int64] = [],
        done: @escaping @Sendable (Result<Int64, DatabaseError>) -> Void
    ) {
        guard !records.isEmpty else { return done(.failure(DatabaseError(.invalidValue, "No records to append."))) }
        let action = self.state.withLock { state in
            let entry = Entry(first: state.next, records: records, onDisconnect: onDisconnect, done: done)
            let action = state.machine.enqueue(entry)
            if case .fail = action {} else { state.next += Int64(records.count) }
            return action
        }
        self.run(action)
    }

    /// Fails the records not yet in a batch; a batch in flight still completes.
    public func close() {
        self.run(self.state.withLock { $0.machine.close() })
    }

    private func run(_ action: StateMachine<Entry>.Action) {
        switch action {
        case .none:
            break
        case .append(let batch):
            Task { await self.appendBatch(batch) }
        case .committed:
            preconditionFailure("LogAppender: a commit is an outcome, not a request")
        case .fail(let entries, let error):
            for entry in entries { entry.done(.failure(error)) }
        }
    }

    private func appendBatch(_ batch: [Entry]) async {
        var batch = batch
        while true {
            let outcome = await self.commit(batch)
            let action = self.state.withLock { state in
                switch outcome {
                case .success: state.machine.batchCommitted()
                case .failure(let error): state.machine.batchFailed(error)
                }
            }
            switch outcome {
            case .success:
                self.batches.add(1, ordering: .relaxed)
                for entry in batch { entry.done(.success(entry.last)) }
            case .failure(let error):
                for entry in batch { entry.done(.failure(error)) }
            }
            switch action {
            case .committed(next: let next?):
                batch = next
            case .committed(next: nil), .none:
                return
            case .fail(let entries, let error):
                for entry in entries { entry.done(.failure(error)) }
                return
            case .append:
                preconditionFailure("LogAppender: an outcome does not start a batch")
            }
        }
    }

    /// Appends `batch`; when the statement failed on the way, learns from the log whether it
    /// committed (the records stand at their positions under this epoch) or not (then appends
    /// again: positions and the epoch fence make a second attempt safe).
    private func commit(_ batch: [Entry]) async -> Result<Void, DatabaseError> {
        guard let first = batch.first?.first else { return .success(()) }
        let records = batch.flatMap(\.records)
        let onDisconnect = batch.flatMap(\.onDisconnect)
        var attempts = 0
        while true {
            attempts += 1
            do {
                if onDisconnect.isEmpty {
                    try await self.store.append(records, from: first, under: self.lease)
                } else {
                    try await self.store.append(records, from: first, under: self.lease, runningOnDisconnect: onDisconnect)
                }
                return .success(())
            } catch  where error.code == .clusterUnavailable {
                do {
                    let found = try await self.store.read(self.lease.namespace, after: first - 1, limit: records.count)
                    if found.count == records.count && found.allSatisfy({ $0.epoch == self.lease.epoch }) { return .success(()) }
                    if !found.isEmpty {
                        return .failure(
                            DatabaseError(.notLeader, "Namespace \(self.lease.namespace) is no longer led at epoch \(self.lease.epoch)."))
                    }
                } catch {
                    if attempts >= 3 {
                        return .failure(
                            DatabaseError(
                                .clusterUnavailable, "\(error.message) Whether records from \(first) on were appended is unknown."))
                    }
                }
                if attempts >= 3 { return .failure(error) }
                try? await Task.sleep(for: .milliseconds(100 * attempts))
            } catch {
                return .failure(error)
            }
        }
    }
}
