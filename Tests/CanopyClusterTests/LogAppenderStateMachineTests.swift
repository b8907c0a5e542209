import CanopyCluster
import CanopyCore
import Testing

/// Walks every transition of ``LogAppender/StateMachine``, the illegal ones excepted (they stop
/// the process, by precondition).
@Suite struct LogAppenderStateMachineTests {
    typealias Machine = LogAppender.StateMachine<Int>

    static func appended(_ action: Machine.Action) -> [Int]? {
        if case .append(let batch) = action { return batch }
        return nil
    }

    static func failed(_ action: Machine.Action) -> [Int]? {
        if case .fail(let entries, _) = action { return entries }
        return nil
    }

    static func isNone(_ action: Machine.Action) -> Bool {
        if case .none = action { return true }
        return false
    }

    /// Expects `machine`, once failed or closed, to fail a write queued now at once with `code`,
    /// and a close to have nothing left to do.
    static func expectEnded(
        _ machine: inout Machine, with code: DatabaseError.Code, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let later = machine.enqueue(3)
        #expect(Self.failed(later) == [3], sourceLocation: sourceLocation)
        guard case .fail(_, let error) = later else { return }
        #expect(error.code == code, sourceLocation: sourceLocation)
        let close = machine.close()
        #expect(Self.isNone(close), sourceLocation: sourceLocation)
    }

    @Test func idleStartsABatchAndQueuesWhileItIsInFlight() {
        var machine = Machine()
        let first = machine.enqueue(1)
        #expect(Self.appended(first) == [1])
        let second = machine.enqueue(2)
        let third = machine.enqueue(3)
        #expect(Self.isNone(second) && Self.isNone(third))
        // The batch commits: the queued records are the next batch.
        let committed = machine.batchCommitted()
        guard case .committed(next: let next) = committed else {
            Issue.record("expected a commit")
            return
        }
        #expect(next == [2, 3])
        // That batch commits with nothing queued: idle again, and the next record starts a batch.
        let idle = machine.batchCommitted()
        guard case .committed(next: nil) = idle else {
            Issue.record("expected a commit with nothing next")
            return
        }
        let again = machine.enqueue(4)
        #expect(Self.appended(again) == [4])
    }

    @Test func aFailedBatchFailsWhatIsQueuedAndEverythingAfter() {
        var machine = Machine()
        _ = machine.enqueue(1)
        _ = machine.enqueue(2)
        let failure = machine.batchFailed(DatabaseError(.notLeader, "fenced"))
        #expect(Self.failed(failure) == [2])
        Self.expectEnded(&machine, with: .notLeader)
        guard case .closed = machine.state else {
            Issue.record("expected closed")
            return
        }
    }

    @Test func closingFailsTheQueueAndLetsTheBatchInFlightFinish() {
        var machine = Machine()
        _ = machine.enqueue(1)
        _ = machine.enqueue(2)
        let close = machine.close()
        #expect(Self.failed(close) == [2])
        let committed = machine.batchCommitted()
        guard case .committed(next: nil) = committed else {
            Issue.record("expected a commit with nothing next")
            return
        }
        let failedLate = machine.batchFailed(DatabaseError(.clusterUnavailable, "gone"))
        #expect(Self.isNone(failedLate))
        Self.expectEnded(&machine, with: .closed)
    }

    @Test func closingAnIdleAppender() {
        var machine = Machine()
        let close = machine.close()
        #expect(Self.isNone(close))
        let after = machine.enqueue(1)
        #expect(Self.failed(after) == [1])
    }
}
