import Canopy
import CanopyCluster
import CanopyCore
import CanopyStorage
import Logging
import Synchronization

/// A follower's copy of a namespace (`--replicas`): applies the leader's committed log records to
/// the namespace's database here, in order, whenever it is woken (a notification of an append, a
/// heartbeat, a forwarded write waiting for its record).
final class LogFollower: Sendable {
    let name: String
    let database: Database
    private let store: ClusterStore
    private let logger: Logger
    private let state: Mutex<StateMachine<CheckedContinuation<Bool, Never>>>

    /// The most records read and applied in one step.
    static let pageSize = 10_000

    /// Follows namespace `name` into `database`, which holds the log up to `applied`.
    init(name: String, database: Database, applied: Int64, store: ClusterStore, logger: Logger) {
        self.name = name
        self.database = database
        self.store = store
        self.logger = logger
        self.state = Mutex(StateMachine(applied: applied))
    }

    /// The position of the last record applied here.
    var applied: Int64 { self.state.withLock { $0.applied } }

    /// Records known committed and not applied here yet.
    var lag: Int64 { self.state.withLock { $0.lag } }

    /// Reads and applies the records after the last one applied (now, or right after the
    /// catch-up under way); `committed`: a position known committed.
    func wake(committed: Int64? = nil) {
        if self.state.withLock({ $0.wake(committed: committed) }) { Task { await self.catchUp() } }
    }

    /// Returns once record `sequence` is applied here (`true`), or the follower stopped (`false`).
    func waitUntilApplied(_ sequence: Int64) async -> Bool {
        await withCheckedContinuation { continuation in
            switch self.state.withLock({ $0.wait(for: sequence, continuation) }) {
            case .answer(let applied): continuation.resume(returning: applied)
            case .wait: self.wake(committed: sequence)
            }
        }
    }

    /// Stops following: waiters get `false`.
    func close() {
        for waiter in self.state.withLock({ $0.close() }) { waiter.resume(returning: false) }
    }

    private func catchUp() async {
        while true {
            do throws(DatabaseError) {
                try await self.readAndApply()
            } catch {
                self.logger.warning("Following the log of namespace \(self.name) failed: \(error.message)")
                // The next wake (a notification, a heartbeat) tries again.
                self.state.withLock { $0.failed() }
                return
            }
            if !self.state.withLock({ $0.finished() }) { return }
        }
    }

    /// Reads and applies pages until the log's head, reading each page while the one before is
    /// applied (PostgreSQL and the loop work at once).
    private func readAndApply() async throws(DatabaseError) {
        var page = try await self.readPage(after: self.applied)
        while true {
            let applied = self.applied
            guard let first = page.records.first else {
                // Nothing after `applied`: the head, unless records known committed before the
                // read began are gone (a checkpoint deleted them while this follower lagged).
                guard page.committedBefore > applied else { return }
                try await self.reload()
                page = try await self.readPage(after: self.applied)
                continue
            }
            guard first.seq == applied + 1 else {
                try await self.reload()
                page = try await self.readPage(after: self.applied)
                continue
            }
            let full = page.records.count == Self.pageSize
            let last = page.records[page.records.count - 1].seq
            async let next: Result<Page, DatabaseError>? =
                full
                ? { () async -> Result<Page, DatabaseError> in
                    do throws(DatabaseError) {
                        return .success(try await self.readPage(after: last))
                    } catch {
                        return .failure(error)
                    }
                }() : nil
            try await self.apply(page.records)
            guard let upcoming = await next else { return }
            page = try upcoming.get()
        }
    }

    /// A page of the log, and the newest position known committed when it was asked for.
    private struct Page: Sendable {
        var records: [LogRecord]
        var committedBefore: Int64
    }

    private func readPage(after: Int64) async throws(DatabaseError) -> Page {
        // Read before the query: what was committed then must be in its answer.
        let committed = self.state.withLock { $0.known }
        return Page(records: try await self.store.read(self.name, after: after, limit: Self.pageSize), committedBefore: committed)
    }

    private func apply(_ page: [LogRecord]) async throws(DatabaseError) {
        var decoded: [(sequence: UInt64, now: Int64, write: WriteOperation)] = []
        decoded.reserveCapacity(page.count)
        for record in page {
            decoded.append(try LogRecord.decode(record.bytes, in: "Record \(record.seq) of the log of namespace \(self.name)"))
        }
        let records = decoded
        let failure: DatabaseError?
        do throws(RESTError) {
            failure = try await self.database.loop { access in
                let failed = FirstFailure()
                // One completion for the whole page: none allocated per record.
                let completion: @Sendable (DatabaseError?) -> Void = { error in if let error { failed.record(error) } }
                for record in records { access.apply(record.write, now: record.now, completion: completion) }
                return failed.error
            }
        } catch {
            throw DatabaseError(.closed, "The follower of namespace \(self.name) is closed.")
        }
        if let failure {
            throw DatabaseError(.corrupted, "A record of the log of namespace \(self.name) does not apply here: \(failure.message)")
        }
        self.advance(to: page[page.count - 1].seq)
    }

    /// Loads the namespace again (its checkpoint and the log after it) and replaces the data here
    /// with it: listeners get the events of the difference.
    private func reload() async throws(DatabaseError) {
        let start = try await self.store.loadRetrying(self.name)
        do throws(RESTError) {
            try await self.database.loop { access in
                access.apply(.set(.root, WriteValue(node: start.root)), completion: nil)
            }
        } catch {
            throw DatabaseError(.closed, "The follower of namespace \(self.name) is closed.")
        }
        self.logger.notice("Follower of namespace \(self.name) loaded its checkpoint again, at record \(start.lastSequence).")
        self.advance(to: Int64(start.lastSequence))
    }

    private func advance(to sequence: Int64) {
        for waiter in self.state.withLock({ $0.advance(to: sequence) }) { waiter.resume(returning: true) }
    }
}

/// The first error of the writes of one page (they complete on the loop thread, in order).
private final class FirstFailure: Sendable {
    private let first = Mutex<DatabaseError?>(nil)
    func record(_ error: DatabaseError) { self.first.withLock { $0 = $0 ?? error } }
    var error: DatabaseError? { self.first.withLock { $0 } }
}

extension ClusterStore {
    /// ``load(_:pageSize:)``, again up to twice when a checkpoint written meanwhile deleted
    /// records it was about to read.
    func loadRetrying(_ namespace: String) async throws(DatabaseError) -> DurableStore.Start {
        var attempt = 0
        while true {
            do throws(DatabaseError) {
                return try await self.load(namespace)
            } catch  where error.code == .corrupted && attempt < 2 {
                attempt += 1
            }
        }
    }
}
