import NIOCore
import Testing

@testable import CanopyServer

/// Every transition of a WebSocket outbox's lifecycle (``WireOutbox/StateMachine``), the illegal
/// ones included: detached, open, finishing, closed, and the write jobs. The channel is a name,
/// the stall watch and the waiting callers are numbers.
@Suite("WebSocket outbox state machine")
struct WireOutboxStateMachineTests {
    typealias Machine = WireOutbox.StateMachine<String, Int, Int>

    static func phase(_ machine: Machine) -> String {
        switch machine.phase {
        case .detached: "detached"
        case .open(let channel): "open(\(channel))"
        case .finishing(let channel): "finishing(\(channel))"
        case .closed: "closed"
        }
    }

    static func job(_ action: Machine.JobAction) -> String {
        switch action {
        case .none: "none"
        case .now(let channel): "now(\(channel))"
        case .later(let channel, let wait): "later(\(channel), \(wait.nanoseconds))"
        }
    }

    static func finish(_ action: Machine.FinishAction) -> String { action.spelled }

    @Test("detached: messages are taken but not written; attaching writes what was queued")
    func detached() {
        var machine = Machine(coalescing: 0)
        #expect(Self.phase(machine) == "detached" && machine.accepts)
        let early = machine.queued(push: false, now: 0)
        #expect(Self.job(early) == "none", "no channel yet")
        let attached = machine.attach("c", watch: 1, queued: true)
        #expect(attached == "c" && machine.scheduled && machine.watch == 1)
        #expect(Self.phase(machine) == "open(c)")
        // Illegal: attaching again changes nothing.
        let again = machine.attach("d", watch: 2, queued: true)
        #expect(again == nil && Self.phase(machine) == "open(c)" && machine.watch == 1)

        var quiet = Machine(coalescing: 0)
        let nothing = quiet.attach("c", watch: nil, queued: false)
        #expect(nothing == nil && !quiet.scheduled)

        var unused = Machine(coalescing: 0)
        let finished = unused.finish(1, drained: true)
        #expect(Self.finish(finished) == "resume(drop: true)" && Self.phase(unused) == "closed" && !unused.accepts)
        let late = unused.attach("c", watch: nil, queued: false)
        #expect(late == nil && Self.phase(unused) == "closed", "illegal: a closed outbox stays closed")
    }

    @Test("open: one write job at a time; a job that leaves more queued is followed by another")
    func jobs() {
        var machine = Machine(coalescing: 0)
        _ = machine.attach("c", watch: nil, queued: false)
        let first = machine.queued(push: false, now: 0)
        #expect(Self.job(first) == "now(c)")
        let second = machine.queued(push: true, now: 0)
        #expect(Self.job(second) == "none", "a job is already queued")
        machine.jobStarted(deferred: false)
        #expect(!machine.scheduled)
        let more = machine.written(queued: true, drained: false)
        #expect(more.schedule == "c" && more.resume.isEmpty && machine.scheduled)
        let busy = machine.written(queued: true, drained: false)
        #expect(busy.schedule == nil && busy.resume.isEmpty, "a job is already queued")
        machine.jobStarted(deferred: false)
        let done = machine.written(queued: false, drained: true)
        #expect(done.schedule == nil && done.resume.isEmpty && Self.phase(machine) == "open(c)")
        let nobody = machine.idle(drained: true)
        #expect(nobody.isEmpty, "nobody waits")
    }

    @Test("coalescing: a push within an interval of the last write waits for its end; an answer does not")
    func coalescing() {
        var machine = Machine(coalescing: 10)
        _ = machine.attach("c", watch: nil, queued: false)
        machine.wrote(at: 100)
        let push = machine.queued(push: true, now: 104)
        #expect(Self.job(push) == "later(c, 6)" && machine.deferred)
        let another = machine.queued(push: true, now: 105)
        #expect(Self.job(another) == "none", "already deferred")
        let deferredMore = machine.written(queued: true, drained: false)
        #expect(deferredMore.schedule == nil, "the deferred job will write it")
        let answer = machine.queued(push: false, now: 106)
        #expect(Self.job(answer) == "now(c)", "answers go at once")
        machine.jobStarted(deferred: true)
        #expect(!machine.deferred && machine.scheduled)
        machine.jobStarted(deferred: false)
        let late = machine.queued(push: true, now: 200)
        #expect(Self.job(late) == "now(c)", "a quiet connection's push goes at once")
    }

    @Test("finishing: nothing more is taken; the callers are resumed once everything is written")
    func finishing() {
        var machine = Machine(coalescing: 0)
        _ = machine.attach("c", watch: nil, queued: false)
        let first = machine.finish(1, drained: false)
        #expect(Self.finish(first) == "wait" && Self.phase(machine) == "finishing(c)" && !machine.accepts)
        let second = machine.finish(2, drained: false)
        #expect(Self.finish(second) == "wait")
        // Illegal while finishing: a message (the outbox refuses it first) schedules nothing.
        let refused = machine.queued(push: false, now: 0)
        #expect(Self.job(refused) == "none")
        let more = machine.written(queued: true, drained: false)
        #expect(more.schedule == "c", "what was queued is still written")
        machine.jobStarted(deferred: false)
        let done = machine.written(queued: false, drained: true)
        #expect(done.resume == [1, 2] && Self.phase(machine) == "closed")

        var idle = Machine(coalescing: 0)
        _ = idle.attach("c", watch: nil, queued: false)
        let at = idle.finish(1, drained: true)
        #expect(Self.finish(at) == "resume(drop: true)" && Self.phase(idle) == "closed")

        var scheduled = Machine(coalescing: 0)
        _ = scheduled.attach("c", watch: nil, queued: true)
        _ = scheduled.finish(1, drained: true)
        #expect(Self.phase(scheduled) == "finishing(c)", "a queued job still runs")
        let waits = scheduled.finish(2, drained: false)
        #expect(Self.finish(waits) == "wait")
        scheduled.jobStarted(deferred: false)
        let idleNow = scheduled.finish(3, drained: true)
        #expect(Self.finish(idleNow) == "resume(drop: false)")
        let resumed = scheduled.idle(drained: true)
        #expect(resumed == [1, 2] && Self.phase(scheduled) == "closed")
    }

    @Test("closed: by an overflow, a cut-off or a failed write, from any phase; final")
    func closed() {
        var open = Machine(coalescing: 0)
        _ = open.attach("c", watch: 7, queued: false)
        _ = open.queued(push: false, now: 0)
        let closed = open.close()
        #expect(closed.resume.isEmpty && closed.watch == 7 && Self.phase(open) == "closed" && !open.accepts)

        var finishing = Machine(coalescing: 0)
        _ = finishing.attach("c", watch: nil, queued: false)
        _ = finishing.finish(1, drained: false)
        let cut = finishing.close()
        #expect(cut.resume == [1], "the callers are resumed: nothing more is written")

        var failing = Machine(coalescing: 0)
        _ = failing.attach("c", watch: nil, queued: false)
        failing.failed()
        let after = failing.written(queued: false, drained: true)
        #expect(after.schedule == nil && Self.phase(failing) == "closed")

        var detached = Machine(coalescing: 0)
        _ = detached.close()
        #expect(Self.phase(detached) == "closed")

        // Illegal once closed: nothing is scheduled or attached; callers wait for the writes
        // in flight only.
        var machine = open
        let job = machine.queued(push: false, now: 0)
        #expect(Self.job(job) == "none")
        let written = machine.written(queued: true, drained: false)
        #expect(written.schedule == nil)
        machine.jobStarted(deferred: false)
        let waits = machine.finish(1, drained: false)
        #expect(Self.finish(waits) == "wait")
        let inFlightDone = machine.idle(drained: true)
        #expect(inFlightDone == [1])
        let idle = machine.finish(2, drained: true)
        #expect(Self.finish(idle) == "resume(drop: true)")
        let attached = machine.attach("d", watch: nil, queued: true)
        #expect(attached == nil && Self.phase(machine) == "closed")
    }
}
