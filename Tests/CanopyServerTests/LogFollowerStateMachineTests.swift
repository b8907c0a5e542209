import Testing

@testable import CanopyServer

/// Every transition of a follower's lifecycle (``LogFollower/StateMachine``): idle, catching up
/// (once more when woken meanwhile), failed, closed, and the waiters for an applied position.
/// Waiters are names.
@Suite("Log follower state machine")
struct LogFollowerStateMachineTests {
    typealias Machine = LogFollower.StateMachine<String>

    @Test func aWakeStartsOneCatchUpAndAWakeDuringItRunsItOnceMore() {
        var machine = Machine(applied: 5)
        #expect(machine.phase == .idle)
        let outcome1 = machine.wake(committed: nil)

        #expect(outcome1)
        #expect(machine.phase == .catchingUp(again: false))
        // Woken twice while it runs: one more run, not two.
        let outcome2 = machine.wake(committed: 7)

        #expect(!outcome2)
        let outcome3 = machine.wake(committed: nil)

        #expect(!outcome3)
        #expect(machine.phase == .catchingUp(again: true))
        let outcome4 = machine.finished()

        #expect(outcome4)
        #expect(machine.phase == .catchingUp(again: false))
        let outcome5 = machine.finished()

        #expect(!outcome5)
        #expect(machine.phase == .idle)
        // Finishing while idle does nothing.
        let outcome6 = machine.finished()

        #expect(!outcome6)
        #expect(machine.phase == .idle)
    }

    @Test func aFailedCatchUpWaitsForTheNextWake() {
        var machine = Machine(applied: 0)
        let outcome7 = machine.wake(committed: 3)

        #expect(outcome7)
        machine.failed()
        #expect(machine.phase == .idle)
        // Failing while idle does nothing; the next wake starts again.
        machine.failed()
        #expect(machine.phase == .idle)
        let outcome8 = machine.wake(committed: nil)

        #expect(outcome8)
    }

    @Test func positionsMoveOnlyForwardAndGiveTheLag() {
        var machine = Machine(applied: 10)
        #expect(machine.lag == 0)
        _ = machine.wake(committed: 15)
        #expect(machine.known == 15 && machine.lag == 5)
        // An older notification changes nothing.
        _ = machine.wake(committed: 12)
        #expect(machine.known == 15)
        _ = machine.advance(to: 13)
        #expect(machine.applied == 13 && machine.lag == 2)
        _ = machine.advance(to: 11)
        #expect(machine.applied == 13)
        // Applying past what was known moves what is known too.
        _ = machine.advance(to: 20)
        #expect(machine.applied == 20 && machine.known == 20 && machine.lag == 0)
    }

    @Test func waitersAreAnsweredOnceTheirPositionIsApplied() {
        var machine = Machine(applied: 4)
        guard case .answer(true) = machine.wait(for: 4, "now") else {
            Issue.record("a position already applied is answered at once")
            return
        }
        guard case .wait = machine.wait(for: 6, "six"), case .wait = machine.wait(for: 8, "eight"),
            case .wait = machine.wait(for: 6, "six again")
        else {
            Issue.record("later positions wait")
            return
        }
        let outcome9 = machine.advance(to: 5)

        #expect(outcome9.isEmpty)
        let outcome10 = machine.advance(to: 7)

        #expect(outcome10 == ["six", "six again"])
        let outcome11 = machine.advance(to: 9)

        #expect(outcome11 == ["eight"])
        let outcome12 = machine.advance(to: 10)

        #expect(outcome12.isEmpty)
    }

    @Test func closingAnswersTheWaitersAndEndsEverything() {
        var machine = Machine(applied: 1)
        _ = machine.wake(committed: nil)
        _ = machine.wait(for: 3, "a")
        _ = machine.wait(for: 5, "b")
        let outcome13 = machine.close()

        #expect(outcome13 == ["a", "b"])
        #expect(machine.phase == .closed)
        // Final: no catch-up starts or runs again, waiting is answered `false`, failing stays closed.
        let outcome14 = machine.wake(committed: 9)

        #expect(!outcome14)
        let outcome15 = machine.finished()

        #expect(!outcome15)
        machine.failed()
        #expect(machine.phase == .closed)
        guard case .answer(false) = machine.wait(for: 7, "late") else {
            Issue.record("a closed follower answers waiters at once")
            return
        }
        // What was applied stays answerable.
        guard case .answer(true) = machine.wait(for: 1, "applied") else {
            Issue.record("an applied position is answered even when closed")
            return
        }
        let outcome16 = machine.close()

        #expect(outcome16.isEmpty)
    }
}
