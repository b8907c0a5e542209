import CanopyCore
import CanopyStorage
import CanopyTestSupport
import Foundation
import Testing

@testable import Canopy

/// Failures while running: short writes, a full disk, failed syncs, a journal that cannot be
/// repaired. Failed writes get an error, memory goes back to what is on disk, and nothing is
/// ever reported durable that is not.
@Suite("Storage faults: short writes, ENOSPC, fsync errors")
struct StorageFaultTests {
    /// The directory of one test: Swift Testing makes a suite instance for each test, and the
    /// directory is removed with it when the test ends.
    let dir = TemporaryDirectory()

    /// Sets `value` at `path`, logging the completion as `index`.
    static func set(_ db: Database, _ path: String, _ value: Any, _ log: CompletionLog, _ index: Int) {
        db.reference(withPath: path).setValue(value, withCompletionBlock: log.callback(index))
    }

    /// A durable database in `dir` whose file changes go through a new `FaultyFileIO`, holding
    /// `a = 1` (write 0 of the returned log, already durable).
    static func openWithOneWrite(_ dir: TemporaryDirectory) throws -> (Database, FaultyFileIO, CompletionLog) {
        let io = FaultyFileIO()
        let db = try Database(path: dir.path, .manual(), io: io)
        let log = CompletionLog()
        Self.set(db, "a", 1, log, 0)
        db.drain()
        #expect(log.succeeded == [0])
        return (db, io, log)
    }

    @Test("Short writes are continued: every write completes and is on disk")
    func shortWrites() throws {
        let io = FaultyFileIO()
        let db = try Database(path: dir.path, .manual(), io: io)
        io.arm { $0.shortWrites = 5 }
        let log = CompletionLog()
        for index in 0..<5 {
            Self.set(db, "items/i\(index)", String(repeating: "v", count: 100 * (index + 1)), log, index)
            db.drain()
        }
        #expect(log.succeeded == [0, 1, 2, 3, 4])
        #expect(io.injected == 5)
        let before = try exportedTree(db)
        db.close()
        let reopened = try Database(path: dir.path, .manual())
        defer { reopened.close() }
        #expect(try exportedTree(reopened) == before)
    }

    /// The shared scenario: a durable write, then a failing batch, then a write that works again.
    func failedBatchIsUndone(arm: (inout FaultyFileIO.Plan) -> Void, message: String) throws {
        let (db, io, log) = try Self.openWithOneWrite(dir)
        var seen: [JSONValue] = []
        db.reference(withPath: "a").observe(.value) { seen.append($0.json) }
        io.arm(arm)
        Self.set(db, "a", 2, log, 1)
        Self.set(db, "b", 3, log, 2)
        db.drain()
        #expect(log.succeeded == [0])
        #expect(log.failed == [1, 2])
        let error = try #require(log.results[1] ?? nil)
        #expect(error.code == .ioError)
        #expect(error.message.contains(message), "\(error.message)")
        // Observers saw the write, then saw it undone; memory equals the disk again.
        #expect(seen == [1, 2, 1])
        #expect(try exportedTree(db) == ["a": 1])
        // The journal goes on.
        Self.set(db, "c", 4, log, 3)
        db.drain()
        #expect(log.succeeded == [0, 3])
        #expect(try exportedTree(db) == ["a": 1, "c": 4])
        db.close()
        #expect(try reopenedTree(dir.path) == ["a": 1, "c": 4])
    }

    @Test("A full disk (ENOSPC) fails the batch, undoes it in memory and cuts it from the journal")
    func diskFull() throws {
        try self.failedBatchIsUndone(arm: { $0.failingWrites = 1 }, message: "No space left on device")
    }

    @Test("A write error after a partial write is cut back too")
    func partialThenFull() throws {
        try self.failedBatchIsUndone(
            arm: {
                $0.shortWrites = 1
                $0.failingWrites = 1
            }, message: "No space left on device")
    }

    @Test("An fsync error under .always fails the batch, which is undone and cut from the journal")
    func fsyncError() throws {
        try self.failedBatchIsUndone(arm: { $0.failingSyncs = 1 }, message: "Input/output error")
    }

    @Test("A journal that cannot be cut back is broken: later writes fail at once, memory is untouched")
    func brokenJournal() throws {
        let (db, io, log) = try Self.openWithOneWrite(dir)
        io.arm {
            $0.failingSyncs = 1
            $0.failingTruncates = 1
        }
        Self.set(db, "a", 2, log, 1)
        db.drain()
        #expect(log.failed == [1])
        Self.set(db, "b", 5, log, 2)
        db.drain()
        #expect(log.failed == [1, 2])
        let refusal = try #require(log.results[2] ?? nil)
        #expect(refusal.message.contains("unusable"))
        #expect(try exportedTree(db) == ["a": 1])
        db.close()
        // The failed record may still be in the file (the cut failed), but nothing acknowledged
        // is missing and the tree is a prefix state.
        let reopened = try Database(path: dir.path, .manual())
        defer { reopened.close() }
        let tree = try exportedTree(reopened)
        #expect(tree == ["a": 1] || tree == ["a": 2])
    }

    @Test("Under .periodic a failed sync breaks the journal: acknowledged writes stay, later ones are refused")
    func periodicSyncFailure() throws {
        let io = FaultyFileIO()
        let clock = ManualJournalClock()
        let db = try Database(path: dir.path, .manual(.periodic(.milliseconds(1))), io: io, journalClock: clock)
        io.arm { $0.failingSyncs = 1 }
        let log = CompletionLog()
        Self.set(db, "a", 1, log, 0)
        db.drain()
        #expect(log.succeeded == [0])  // written, not yet synced
        #expect(db.core.store?.broken == nil)
        // The interval passes: the periodic sync runs (and fails); `drain` waits for it.
        clock.advance(by: 1_000_000)
        db.drain()
        let message = try #require(db.core.store?.broken?.message)
        #expect(message.contains("may be lost"))
        Self.set(db, "b", 2, log, 1)
        db.drain()
        #expect(log.failed == [1])
        #expect(try exportedTree(db) == ["a": 1])
        db.close()
    }

    @Test("Under .periodic a full disk after acknowledged, unsynced writes fails only the new batch; the acknowledged ones stay")
    func periodicDiskFull() throws {
        let io = FaultyFileIO()
        let db = try Database(path: dir.path, .manual(.periodic(.seconds(3_600))), io: io)
        let log = CompletionLog()
        Self.set(db, "a", 1, log, 0)
        db.drain()
        #expect(log.succeeded == [0])  // written, not yet synced
        io.arm { $0.failingWrites = 1 }
        Self.set(db, "b", 2, log, 1)
        db.drain()
        #expect(log.failed == [1])
        #expect((log.results[1] ?? nil)?.message.contains("No space left on device") == true)
        #expect(try exportedTree(db) == ["a": 1])
        Self.set(db, "c", 3, log, 2)
        db.drain()
        #expect(log.succeeded == [0, 2])
        db.close()
        #expect(try reopenedTree(dir.path) == ["a": 1, "c": 3])
    }

    @Test("A failed checkpoint (rename error) leaves the journal in charge: nothing is lost, no temporary file stays")
    func checkpointRenameFails() throws {
        let (db, io, log) = try Self.openWithOneWrite(dir)
        io.arm {
            $0.target = "checkpoint-"
            $0.failingRenames = 1
        }
        let checkpointLog = CompletionLog()
        let done = checkpointLog.callback(0)
        db.checkpoint { error in done(error, db.reference()) }
        db.drain()
        #expect(checkpointLog.failed == [0])
        #expect((checkpointLog.results[0] ?? nil)?.code == .ioError)
        Self.set(db, "b", 2, log, 1)
        db.drain()
        #expect(log.succeeded == [0, 1])
        #expect(!dir.names.contains { $0.hasSuffix(".tmp") })
        #expect(dir.checkpoints.isEmpty)
        db.close()
        #expect(try reopenedTree(dir.path) == ["a": 1, "b": 2])
    }
}
