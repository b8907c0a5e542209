import Testing

@testable import CanopyServer

/// Every transition of the lifecycle and byte accounting shared by the per-client outboxes
/// (``OutboxCore``), the illegal ones included: open, finishing, closed, the admissions against
/// both limits, and the waiting callers (numbers).
@Suite("Outbox core state machine")
struct OutboxCoreTests {
    typealias Core = OutboxCore<Int>

    static func finish(_ action: Core.FinishAction) -> String {
        switch action {
        case .resume(let drop): "resume(drop: \(drop))"
        case .wait: "wait"
        }
    }

    /// Messages limited to 10 bytes, long answers to 100.
    static func core() -> Core { Core(limit: OutboxLimit(10), answerLimit: OutboxLimit(100)) }

    @Test("open: messages are admitted and counted until too many wait; one alone is never too many")
    func admission() {
        var core = Self.core()
        #expect(core.phase == .open && core.accepts && core.bytes == OutboxBytes())
        #expect(core.admit(50, answer: false) == .admitted, "a single message alone is never too many")
        core.queued(6, answer: false)
        #expect(core.admit(4, answer: false) == .admitted)
        #expect(core.admit(5, answer: false) == .overflow)
        // Bytes handed to the transport still count until the client takes them.
        core.handedOver(6)
        #expect(core.bytes == OutboxBytes(queued: 0, inFlight: 6, answers: 0))
        #expect(core.admit(5, answer: false) == .overflow)
        core.taken(inFlight: 6)
        #expect(core.admit(5, answer: false) == .admitted && core.bytes == OutboxBytes())
        // Long answers are counted apart, against their own limit.
        core.queued(9, answer: false)
        #expect(core.admit(90, answer: true) == .admitted)
        core.queued(90, answer: true)
        #expect(core.admit(10, answer: true) == .admitted && core.admit(11, answer: true) == .overflow)
        core.taken(90, answer: true)
        core.taken(9, answer: false)
        #expect(core.bytes == OutboxBytes() && core.phase == .open)
        // Nothing waits, nobody waits: idle changes nothing.
        #expect(core.idle(drained: true).isEmpty && core.phase == .open)
    }

    @Test("finish: an open outbox with nothing left closes at once; with something left it finishes")
    func finish() {
        var drained = Self.core()
        #expect(Self.finish(drained.finish(1, drained: true)) == "resume(drop: true)")
        #expect(drained.phase == .closed && !drained.accepts)

        var busy = Self.core()
        busy.queued(4, answer: false)
        #expect(Self.finish(busy.finish(1, drained: false)) == "wait")
        #expect(busy.phase == .finishing && !busy.accepts)
        #expect(busy.admit(1, answer: false) == .refused, "nothing more is taken")
        #expect(Self.finish(busy.finish(2, drained: false)) == "wait")
        #expect(Self.finish(busy.finish(nil, drained: false)) == "wait", "nobody waits: nothing kept")
        #expect(busy.idle(drained: false).isEmpty && busy.phase == .finishing)
        // Drained meanwhile: a later caller resumes at once, and nothing is dropped.
        #expect(Self.finish(busy.finish(3, drained: true)) == "resume(drop: false)")
        busy.taken(4, answer: false)
        #expect(busy.idle(drained: true) == [1, 2] && busy.phase == .closed)
        #expect(busy.idle(drained: true).isEmpty)

        // Never drained (a detached outbox's queue): closed, what is queued forgotten.
        var dropped = Self.core()
        dropped.queued(4, answer: false)
        dropped.queued(40, answer: true)
        #expect(Self.finish(dropped.finish(1, drained: true)) == "resume(drop: true)")
        #expect(dropped.bytes == OutboxBytes())
    }

    @Test("close: from any phase the callers are handed back and what is queued is forgotten; final")
    func close() {
        var open = Self.core()
        open.queued(4, answer: false)
        open.handedOver(2)
        #expect(open.close().isEmpty && open.phase == .closed)
        #expect(open.bytes == OutboxBytes(queued: 0, inFlight: 2, answers: 0), "in flight still ends")
        #expect(open.admit(1, answer: false) == .refused && open.admit(1, answer: true) == .refused)

        var finishing = Self.core()
        finishing.queued(4, answer: false)
        _ = finishing.finish(1, drained: false)
        #expect(finishing.close() == [1] && finishing.phase == .closed)
        #expect(finishing.close().isEmpty, "closing again hands nothing back")

        // Illegal once closed: finishing waits only for what is in flight, idle never reopens.
        var closed = open
        #expect(Self.finish(closed.finish(2, drained: false)) == "wait")
        closed.taken(inFlight: 2)
        #expect(closed.idle(drained: true) == [2] && closed.phase == .closed)
        #expect(Self.finish(closed.finish(3, drained: true)) == "resume(drop: true)")
    }

    @Test("fail: the connection is gone; the callers wait for the writes in flight to end")
    func fail() {
        var core = Self.core()
        core.queued(4, answer: false)
        core.handedOver(3)
        _ = core.finish(1, drained: false)
        core.fail()
        #expect(core.phase == .closed && core.bytes == OutboxBytes(queued: 0, inFlight: 3, answers: 0))
        #expect(core.idle(drained: false).isEmpty)
        core.taken(inFlight: 3)
        #expect(core.idle(drained: true) == [1])

        var open = Self.core()
        open.fail()
        #expect(open.phase == .closed && !open.accepts)
    }
}
