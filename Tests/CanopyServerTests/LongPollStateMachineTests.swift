import Testing

@testable import CanopyServer

/// Every transition of a long-poll outbox's lifecycle (``LongPollOutbox/StateMachine``): waiting,
/// holding, finishing, closed, and the idle checks. Polls are names, waiting callers numbers,
/// times nanoseconds.
@Suite("Long-poll outbox state machine")
struct LongPollStateMachineTests {
    typealias Machine = LongPollOutbox.StateMachine<String, Int>

    static func phase(_ machine: Machine) -> String {
        switch machine.phase {
        case .waiting(let since): "waiting(\(since))"
        case .holding(let poll, let token): "holding(\(poll), \(token))"
        case .closed: "closed"
        }
    }

    static func actions(_ actions: [Machine.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .answer(let poll): "answer(\(poll))"
            case .refuse(let poll): "refuse(\(poll))"
            case .hold(let token): "hold(\(token))"
            case .check(let after): "check(\(after))"
            }
        }
    }

    static func check(_ check: Machine.Check) -> String {
        switch check {
        case .none: "none"
        case .again(let after): "again(\(after))"
        case .expired(let slow, let resume): "expired(slow: \(slow), \(resume))"
        }
    }

    static func finish(_ action: Machine.FinishAction) -> String { action.spelled }

    /// Idle 90, stall 30: the first check comes at the sooner of the two.
    static func machine() -> Machine { Machine(now: 0, idle: 90, stall: 30) }

    @Test("waiting: a poll with something queued is answered at once; with nothing, it is held")
    func waiting() {
        var machine = Self.machine()
        #expect(Self.phase(machine) == "waiting(0)" && machine.accepts)
        #expect(Self.actions([machine.firstCheck]) == ["check(30)"])
        #expect(Self.actions(machine.poll("a", now: 5, queued: true)) == ["answer(a)", "check(30)"])
        #expect(Self.phase(machine) == "waiting(5)")
        #expect(Self.actions(machine.poll("b", now: 6, queued: false)) == ["hold(1)"])
        #expect(Self.phase(machine) == "holding(b, 1)")
        // Nothing happens to a waiting outbox when a message is queued, or a stale hold ends.
        var idle = Self.machine()
        #expect(idle.queued(now: 1).isEmpty && idle.holdEnded(7, now: 2).isEmpty)
        #expect(Self.phase(idle) == "waiting(0)")
    }

    @Test("holding: a message, the end of the hold or a new poll answers the held poll")
    func holding() {
        var machine = Self.machine()
        _ = machine.poll("a", now: 1, queued: false)
        #expect(Self.actions(machine.queued(now: 2)) == ["answer(a)", "check(30)"])
        #expect(Self.phase(machine) == "waiting(2)")

        _ = machine.poll("b", now: 3, queued: false)
        #expect(Self.phase(machine) == "holding(b, 2)")
        // A stale hold (the first) changes nothing; the current one answers the poll, empty.
        #expect(machine.holdEnded(1, now: 4).isEmpty && Self.phase(machine) == "holding(b, 2)")
        #expect(Self.actions(machine.holdEnded(2, now: 5)) == ["answer(b)", "check(30)"])
        #expect(Self.phase(machine) == "waiting(5)")

        _ = machine.poll("c", now: 6, queued: false)
        // The client opened another request (to send): the held one goes back, the new is held.
        #expect(Self.actions(machine.poll("d", now: 7, queued: false)) == ["answer(c)", "hold(4)"])
        #expect(Self.phase(machine) == "holding(d, 4)")
        #expect(Self.check(machine.check(now: 1000, queued: true)) == "none")
    }

    @Test("idle checks: a client that stops polling expires, sooner when messages wait for it")
    func idleChecks() {
        var machine = Self.machine()
        #expect(Self.check(machine.check(now: 20, queued: false)) == "again(70)")
        #expect(Self.check(machine.check(now: 20, queued: true)) == "again(10)")
        #expect(Self.check(machine.check(now: 89, queued: false)) == "again(1)")
        #expect(Self.check(machine.check(now: 90, queued: false)) == "expired(slow: false, [])")
        #expect(Self.phase(machine) == "closed" && !machine.accepts)
        #expect(Self.check(machine.check(now: 200, queued: false)) == "none")

        var slow = Self.machine()
        _ = slow.poll("a", now: 10, queued: true)
        #expect(Self.finish(slow.finish(1, drained: false)) == "wait")
        #expect(Self.check(slow.check(now: 40, queued: true)) == "expired(slow: true, [1])")
    }

    @Test("finishing: no more messages are taken, what is queued goes to polls, then the callers resume")
    func finishing() {
        var machine = Self.machine()
        #expect(Self.finish(machine.finish(1, drained: false)) == "wait")
        #expect(!machine.accepts && Self.phase(machine) == "waiting(0)")
        #expect(Self.finish(machine.finish(2, drained: false)) == "wait")
        #expect(machine.taken(drained: false).isEmpty)
        #expect(Self.actions(machine.poll("a", now: 1, queued: true)) == ["answer(a)", "check(30)"])
        #expect(machine.taken(drained: true) == [1, 2])
        #expect(machine.taken(drained: true).isEmpty)
        // Drained already: resumes at once, keeping the (empty) queue.
        #expect(Self.finish(machine.finish(3, drained: true)) == "resume(drop: false)")
        // An open outbox that is drained never waits in taken().
        var open = Self.machine()
        #expect(open.taken(drained: true).isEmpty)
    }

    @Test("closed: the held poll and the waiting callers are handed back; later polls are refused")
    func closed() {
        var machine = Self.machine()
        _ = machine.poll("a", now: 1, queued: false)
        _ = machine.finish(1, drained: false)
        let (held, resume) = machine.close()
        #expect(held == "a" && resume == [1])
        #expect(Self.phase(machine) == "closed" && !machine.accepts)
        #expect(Self.actions(machine.poll("b", now: 2, queued: false)) == ["refuse(b)"])
        #expect(machine.queued(now: 3).isEmpty && machine.holdEnded(1, now: 4).isEmpty)
        #expect(Self.finish(machine.finish(2, drained: false)) == "resume(drop: true)")
        let again = machine.close()
        #expect(again.held == nil && again.resume.isEmpty)

        var waiting = Self.machine()
        #expect(waiting.close().held == nil)
    }
}
