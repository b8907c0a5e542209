import NIOCore
import Testing

@testable import CanopyServer

/// Every transition of an event stream's queue (``EventStream/StateMachine``), the illegal ones
/// included: streaming, finishing, ended; the waiting response task is a number.
@Suite("Event stream state machine")
struct EventStreamStateMachineTests {
    typealias Machine = EventStream.StateMachine<Int>

    static func bytes(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    static func text(_ buffer: ByteBuffer?) -> String? { buffer.map { String(buffer: $0) } }

    /// The batch `next()` takes, as text.
    static func take(_ machine: inout Machine) -> (snapshot: Int?, bytes: String?, trailer: String?)? {
        guard case .batch(let batch) = machine.next() else { return nil }
        return (batch.snapshot?.bytes.count, Self.text(batch.bytes), Self.text(batch.trailer))
    }

    @Test("streaming: events queue up and wake a waiting task; a batch takes them all; nothing queued waits")
    func streaming() {
        var machine = Machine(limit: OutboxLimit(100), interval: nil)
        #expect(machine.phase == .streaming)
        let idle = machine.next()
        guard case .wait = idle else {
            Issue.record("nothing queued: wait")
            return
        }
        let waits = machine.wait(1)
        #expect(waits)
        guard case .wake(1) = machine.send(Self.bytes("a"), now: 0) else {
            Issue.record("the waiting task is woken")
            return
        }
        guard case .none = machine.send(Self.bytes("b"), now: 0) else {
            Issue.record("no task waits")
            return
        }
        let batch = Self.take(&machine)
        #expect(batch?.bytes == "ab" && batch?.snapshot == nil && batch?.trailer == nil)
        let woken = machine.wakeDeferred(now: 0)
        #expect(woken == nil, "no task waits, nothing queued")
        let again = machine.send(Self.bytes("c"), now: 0)
        guard case .none = again else {
            Issue.record("no task waits")
            return
        }
        let mustNotWait = machine.wait(2)
        #expect(!mustNotWait, "something is queued: take it at once")
    }

    @Test("the initial put comes alone, first, and wakes the task")
    func initial() {
        var machine = Machine(limit: OutboxLimit(10), interval: nil)
        _ = machine.wait(1)
        let woken = machine.sendInitial(Rendering([UInt8](repeating: 1, count: 50)))
        #expect(woken == 1)
        _ = machine.send(Self.bytes("e"), now: 0)
        let first = Self.take(&machine)
        #expect(first?.snapshot == 50 && first?.bytes == nil)
        let second = Self.take(&machine)
        #expect(second?.bytes == "e")
    }

    @Test("coalescing: a task woken less than an interval ago is woken by the scheduler's tick")
    func coalescing() {
        var machine = Machine(limit: OutboxLimit(100), interval: 10)
        _ = machine.wait(1)
        guard case .wake(1) = machine.send(Self.bytes("a"), now: 100) else {
            Issue.record("woken at once")
            return
        }
        _ = Self.take(&machine)
        _ = machine.wait(2)
        guard case .schedule = machine.send(Self.bytes("b"), now: 105) else {
            Issue.record("deferred")
            return
        }
        #expect(machine.deferred)
        guard case .none = machine.send(Self.bytes("c"), now: 106) else {
            Issue.record("already deferred")
            return
        }
        let woken = machine.wakeDeferred(now: 111)
        #expect(woken == 2 && !machine.deferred)
        #expect(Self.take(&machine)?.bytes == "bc")
        _ = machine.wait(3)
        guard case .wake(3) = machine.send(Self.bytes("d"), now: 200) else {
            Issue.record("a quiet stream is woken at once")
            return
        }
    }

    @Test("overflow: more than the limit waiting ends the stream; a single event alone never does")
    func overflow() {
        var machine = Machine(limit: OutboxLimit(4), interval: nil)
        guard case .none = machine.send(Self.bytes("123456"), now: 0) else {
            Issue.record("one event alone fits")
            return
        }
        _ = machine.wait(1)
        guard case .overflow(let waiter) = machine.send(Self.bytes("7"), now: 0) else {
            Issue.record("overflow")
            return
        }
        #expect(waiter == nil, "the task does not wait while something is queued")
        #expect(machine.phase == .ended)
        let end = machine.next()
        guard case .end = end else {
            Issue.record("dropped: nothing more")
            return
        }
    }

    @Test("finishing: what is queued, then the trailer, then the end; nothing more is taken")
    func finishing() {
        var machine = Machine(limit: OutboxLimit(100), interval: nil)
        _ = machine.send(Self.bytes("a"), now: 0)
        _ = machine.wait(1)
        let woken = machine.finish(trailer: Self.bytes("bye"))
        #expect(machine.phase == .finishing && woken == nil)
        // Illegal in finishing: ignored.
        guard case .none = machine.send(Self.bytes("b"), now: 0) else {
            Issue.record("no events after finish")
            return
        }
        #expect(machine.sendInitial(Rendering([1])) == nil)
        #expect(machine.finish(trailer: Self.bytes("again")) == nil)
        let batch = Self.take(&machine)
        #expect(batch?.bytes == "a" && batch?.trailer == "bye")
        let end = machine.next()
        guard case .end = end else {
            Issue.record("then the end")
            return
        }
        #expect(machine.phase == .ended)

        var waiting = Machine(limit: OutboxLimit(100), interval: nil)
        _ = waiting.wait(7)
        #expect(waiting.finish(trailer: nil) == 7, "the waiting task is woken to see the end")
        let mustNotWait = waiting.wait(8)
        #expect(!mustNotWait)
        let last = waiting.next()
        guard case .end = last else {
            Issue.record("the end")
            return
        }
    }

    @Test("ended: dropped from any phase, everything queued is forgotten, nothing is taken any more")
    func ended() {
        var streaming = Machine(limit: OutboxLimit(100), interval: nil)
        _ = streaming.wait(1)
        #expect(streaming.drop() == 1 && streaming.phase == .ended)

        var finishing = Machine(limit: OutboxLimit(100), interval: nil)
        _ = finishing.send(Self.bytes("a"), now: 0)
        _ = finishing.finish(trailer: Self.bytes("t"))
        _ = finishing.drop()
        let end = finishing.next()
        guard case .end = end else {
            Issue.record("dropped: what was queued is gone")
            return
        }

        // Illegal once ended: every transition is ignored.
        var machine = streaming
        guard case .none = machine.send(Self.bytes("x"), now: 0) else {
            Issue.record("ignored")
            return
        }
        #expect(machine.sendInitial(Rendering([1])) == nil)
        #expect(machine.finish(trailer: nil) == nil)
        #expect(machine.drop() == nil)
        #expect(machine.wakeDeferred(now: 0) == nil)
        let mustNotWait = machine.wait(2)
        #expect(!mustNotWait)
        #expect(machine.phase == .ended)
    }
}
