import CanopyCore
import Testing

@testable import CanopyStorage

/// Every transition of the journal writer's lifecycle (``JournalWriter/StateMachine``), without a
/// thread or a file: hand-overs in every health and phase, group commit, periodic syncs, failures,
/// resume, and both ways of closing.
@Suite("Journal writer state machine")
struct JournalWriterStateMachineTests {
    typealias Machine = JournalWriter.StateMachine
    static let interval: UInt64 = 100

    func records(_ bytes: [UInt8], last: UInt64) -> JournalWriter.Chunk { .records(bytes, last: last) }

    /// The batch a `.write` step carries, with its sync flag; `nil` for `.wait`.
    func batch(_ step: Machine.Step) -> (chunks: [JournalWriter.Chunk], forceSync: Bool)? {
        if case .write(let chunks, let forceSync) = step { return (chunks, forceSync) }
        return nil
    }

    /// A new machine with one chunk (record 1) handed over, which it queues.
    func machineWithRecordOne(sourceLocation: SourceLocation = #_sourceLocation) -> Machine {
        var m = Machine(now: 0)
        let step = m.handOver(records([1], last: 1))
        #expect(step == .queued, sourceLocation: sourceLocation)
        return m
    }

    @Test("waiting → writing → waiting: hand-overs merge into one batch (group commit), taken whole")
    func groupCommit() throws {
        var m = Machine(now: 0)
        #expect(m.phase == .waiting && m.health == .accepting)
        #expect(!m.hasWork(syncInterval: nil, now: 0))
        if case .write = m.takeBatch(syncInterval: nil, now: 0) { Issue.record("a batch with nothing queued") }
        let step1 = m.handOver(records([1, 2], last: 1))
        #expect(step1 == .queued)
        let step2 = m.handOver(records([3], last: 2))
        #expect(step2 == .queued)
        #expect(m.queuedChunks == 1, "consecutive records merge into one chunk")
        let step3 = m.handOver(.rotate(firstSequence: 3, done: { _ in }))
        #expect(step3 == .queued)
        #expect(m.queuedChunks == 2)
        #expect(m.hasWork(syncInterval: nil, now: 0))
        let taken = try #require(batch(m.takeBatch(syncInterval: nil, now: 0)))
        #expect(taken.chunks.count == 2 && !taken.forceSync)
        guard case .records(let bytes, let last) = taken.chunks[0] else {
            Issue.record("not records")
            return
        }
        #expect(bytes == [1, 2, 3] && last == 2)
        #expect(m.phase == .writing && m.queuedChunks == 0)
        #expect(!m.isIdle(syncInterval: nil, now: 0), "a batch is out")
        // Handed over while writing: queued for the next batch.
        let step4 = m.handOver(records([4], last: 3))
        #expect(step4 == .queued)
        #expect(!m.hasWork(syncInterval: nil, now: 0), "one batch at a time")
        let step5 = m.batchDone()
        #expect(step5 == false)
        #expect(m.phase == .waiting && m.hasWork(syncInterval: nil, now: 0))
        _ = m.takeBatch(syncInterval: nil, now: 0)
        let step6 = m.batchDone()
        #expect(step6 == false)
        #expect(m.isIdle(syncInterval: nil, now: 0))
    }

    @Test("periodic sync: due once unsynced records have waited the interval, not while failed")
    func periodicSync() throws {
        var m = Machine(now: 1_000)
        #expect(!m.periodicSyncDue(interval: Self.interval, now: 5_000), "nothing unsynced")
        m.wroteUnsynced()
        #expect(!m.periodicSyncDue(interval: Self.interval, now: 1_099))
        #expect(m.periodicSyncDue(interval: Self.interval, now: 1_100))
        #expect(!m.periodicSyncDue(interval: nil, now: 9_999), "only under the periodic policy")
        #expect(!m.isIdle(syncInterval: Self.interval, now: 1_100), "a due sync is work")
        let taken = try #require(batch(m.takeBatch(syncInterval: Self.interval, now: 1_100)))
        #expect(taken.chunks.isEmpty && taken.forceSync)
        m.synced(now: 1_100)
        let step7 = m.batchDone()
        #expect(step7 == false)
        #expect(!m.periodicSyncDue(interval: Self.interval, now: 1_150) && m.lastSync == 1_100)
        m.wroteUnsynced()
        _ = m.failed(broken: nil)
        #expect(!m.periodicSyncDue(interval: Self.interval, now: 9_999), "nothing is synced while a failure awaits resume()")
    }

    @Test("accepting → failed (queued chunks dropped, hand-overs refused) → resume() → accepting")
    func failureAndResume() throws {
        var m = self.machineWithRecordOne()
        _ = m.takeBatch(syncInterval: nil, now: 0)
        let step9 = m.handOver(.rotate(firstSequence: 2, done: { _ in }))
        #expect(step9 == .queued)
        let dropped = m.failed(broken: nil)
        #expect(dropped.count == 1 && m.queuedChunks == 0 && m.health == .failed)
        guard case .dropped(let reason) = m.handOver(records([2], last: 2)) else {
            Issue.record("accepted while failed")
            return
        }
        #expect(reason.code == .ioError && reason.message.contains("recovering"))
        let step10 = m.batchDone()
        #expect(step10 == false)
        m.resume()
        #expect(m.health == .accepting)
        let step11 = m.handOver(records([2], last: 2))
        #expect(step11 == .queued)
    }

    @Test("broken is final: resume() does not revive it, and a later failure keeps the first error")
    func broken() throws {
        var m = Machine(now: 0)
        let first = DatabaseError(.ioError, "first")
        _ = m.failed(broken: first)
        #expect(m.health == .broken(first))
        m.resume()
        #expect(m.health == .broken(first))
        let step12 = m.handOver(records([1], last: 1))
        #expect(step12 == .dropped(first))
        _ = m.failed(broken: DatabaseError(.ioError, "second"))
        #expect(m.health == .broken(first))
        // failed → broken
        var n = Machine(now: 0)
        _ = n.failed(broken: nil)
        _ = n.failed(broken: first)
        #expect(n.health == .broken(first))
    }

    @Test("close while waiting: one final batch, synced whatever the policy, then finished")
    func closeWhileWaiting() throws {
        var m = self.machineWithRecordOne()
        let step14 = m.close()
        #expect(step14 == true)
        #expect(m.phase == .closeRequested(writing: false))
        let step15 = m.close()
        #expect(step15 == false, "a second close does nothing")
        guard case .dropped(let reason) = m.handOver(records([2], last: 2)) else {
            Issue.record("accepted while closing")
            return
        }
        #expect(reason.message == "The journal is closed.")
        #expect(m.hasWork(syncInterval: nil, now: 0))
        let taken = try #require(batch(m.takeBatch(syncInterval: nil, now: 0)))
        #expect(taken.chunks.count == 1 && taken.forceSync)
        #expect(m.phase == .writingFinal && !m.isIdle(syncInterval: nil, now: 0))
        let step16 = m.batchDone()
        #expect(step16 == true)
        #expect(m.phase == .finished && m.isIdle(syncInterval: nil, now: 0))
        let step17 = m.close()
        #expect(step17 == false)
        #expect(!m.hasWork(syncInterval: nil, now: 0))
    }

    @Test("close while a batch is out: that batch finishes, then the final synced batch")
    func closeWhileWriting() throws {
        var m = self.machineWithRecordOne()
        _ = m.takeBatch(syncInterval: nil, now: 0)
        let step19 = m.close()
        #expect(step19 == true)
        #expect(m.phase == .closeRequested(writing: true))
        #expect(!m.hasWork(syncInterval: nil, now: 0) && !m.isIdle(syncInterval: nil, now: 0))
        let step20 = m.batchDone()
        #expect(step20 == false, "not finished: the final sync is still to come")
        #expect(m.phase == .closeRequested(writing: false))
        let final = try #require(batch(m.takeBatch(syncInterval: nil, now: 0)))
        #expect(final.chunks.isEmpty && final.forceSync)
        let step21 = m.batchDone()
        #expect(step21 == true && m.phase == .finished)
    }

    @Test("a failure during the final batch still finishes")
    func failureWhileClosing() throws {
        var m = self.machineWithRecordOne()
        let step23 = m.close()
        #expect(step23)
        _ = m.takeBatch(syncInterval: nil, now: 0)
        _ = m.failed(broken: nil)
        let step24 = m.batchDone()
        #expect(step24 == true && m.phase == .finished && m.health == .failed)
    }
}
