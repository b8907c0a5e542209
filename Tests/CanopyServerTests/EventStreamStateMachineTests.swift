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

    /// What `send` asks, as text.
    static func describe(_ action: Machine.SendAction) -> String {
        switch action {
        case .none: "none"
        case .wake(let waiter): "wake(\(waiter))"
        case .schedule: "schedule"
        case .overflow(let waiter): "overflow(\(waiter.map(String.init) ?? "nil"))"
        }
    }

    /// What `next()` finds, as text (a batch by its parts).
    static func next(_ machine: inout Machine) -> String {
        switch machine.next() {
        case .batch(let batch):
            "batch(\(batch.snapshot?.bytes.count ?? 0), \(Self.text(batch.bytes) ?? "-"), \(Self.text(batch.trailer) ?? "-"))"
        case .end: "end"
        case .wait: "wait"
        }
    }

    /// The batch `next()` takes, as text.
    static func take(_ machine: inout Machine) -> (snapshot: Int?, bytes: String?, trailer: String?)? {
        guard case .batch(let batch) = machine.next() else { return nil }
        return (batch.snapshot?.bytes.count, Self.text(batch.bytes), Self.text(batch.trailer))
    }

    @Test("streaming: events queue up and wake a waiting task; a batch takes them all; nothing queued waits")
    func streaming() {
        var machine = Machine(limit: OutboxLimit(100), interval: nil)
        #expect(machine.phase == .streaming)
        let idle = Self.next(&machine)
        #expect(idle == "wait", "nothing queued: wait")
        let waits = machine.wait(1)
        #expect(waits)
        let first = Self.describe(machine.send(Self.bytes("a"), now: 0))
        #expect(first == "wake(1)", "the waiting task is woken")
        let second = Self.describe(machine.send(Self.bytes("b"), now: 0))
        #expect(second == "none", "no task waits")
        let batch = Self.take(&machine)
        #expect(batch?.bytes == "ab" && batch?.snapshot == nil && batch?.trailer == nil)
        let woken = machine.wakeDeferred(now: 0)
        #expect(woken == nil, "no task waits, nothing queued")
        let again = Self.describe(machine.send(Self.bytes("c"), now: 0))
        #expect(again == "none", "no task waits")
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
        let quiet = Self.describe(machine.send(Self.bytes("a"), now: 100))
        #expect(quiet == "wake(1)", "woken at once")
        _ = Self.take(&machine)
        _ = machine.wait(2)
        let busy = Self.describe(machine.send(Self.bytes("b"), now: 105))
        #expect(busy == "schedule", "deferred")
        #expect(machine.deferred)
        let busier = Self.describe(machine.send(Self.bytes("c"), now: 106))
        #expect(busier == "none", "already deferred")
        let woken = machine.wakeDeferred(now: 111)
        #expect(woken == 2 && !machine.deferred)
        let batched = Self.take(&machine)?.bytes
        #expect(batched == "bc")
        _ = machine.wait(3)
        let later = Self.describe(machine.send(Self.bytes("d"), now: 200))
        #expect(later == "wake(3)", "a quiet stream is woken at once")
    }

    @Test("overflow: more than the limit waiting ends the stream; a single event alone never does")
    func overflow() {
        var machine = Machine(limit: OutboxLimit(4), interval: nil)
        let alone = Self.describe(machine.send(Self.bytes("123456"), now: 0))
        #expect(alone == "none", "one event alone fits")
        _ = machine.wait(1)
        let beyond = Self.describe(machine.send(Self.bytes("7"), now: 0))
        #expect(beyond == "overflow(nil)", "overflow")
        #expect(machine.phase == .ended)
        let afterOverflow = Self.next(&machine)
        #expect(afterOverflow == "end", "dropped: nothing more")
    }

    @Test("finishing: what is queued, then the trailer, then the end; nothing more is taken")
    func finishing() {
        var machine = Machine(limit: OutboxLimit(100), interval: nil)
        _ = machine.send(Self.bytes("a"), now: 0)
        _ = machine.wait(1)
        let woken = machine.finish(trailer: Self.bytes("bye"))
        #expect(machine.phase == .finishing && woken == nil)
        // Illegal in finishing: ignored.
        let lateEvent = Self.describe(machine.send(Self.bytes("b"), now: 0))
        #expect(lateEvent == "none", "no events after finish")
        let lateInitial = machine.sendInitial(Rendering([1]))
        #expect(lateInitial == nil)
        let secondFinish = machine.finish(trailer: Self.bytes("again"))
        #expect(secondFinish == nil)
        let batch = Self.take(&machine)
        #expect(batch?.bytes == "a" && batch?.trailer == "bye")
        let afterTrailer = Self.next(&machine)
        #expect(afterTrailer == "end", "then the end")
        #expect(machine.phase == .ended)

        var waiting = Machine(limit: OutboxLimit(100), interval: nil)
        _ = waiting.wait(7)
        let finished = waiting.finish(trailer: nil)
        #expect(finished == 7, "the waiting task is woken to see the end")
        let mustNotWait = waiting.wait(8)
        #expect(!mustNotWait)
        let end = Self.next(&waiting)
        #expect(end == "end", "the end")
    }

    @Test("ended: dropped from any phase, everything queued is forgotten, nothing is taken any more")
    func ended() {
        var streaming = Machine(limit: OutboxLimit(100), interval: nil)
        _ = streaming.wait(1)
        let dropped = streaming.drop()
        #expect(dropped == 1 && streaming.phase == .ended)

        var finishing = Machine(limit: OutboxLimit(100), interval: nil)
        _ = finishing.send(Self.bytes("a"), now: 0)
        _ = finishing.finish(trailer: Self.bytes("t"))
        _ = finishing.drop()
        let afterDrop = Self.next(&finishing)
        #expect(afterDrop == "end", "dropped: what was queued is gone")

        // Illegal once ended: every transition is ignored.
        var machine = streaming
        let lateEvent = Self.describe(machine.send(Self.bytes("x"), now: 0))
        #expect(lateEvent == "none", "ignored")
        let lateInitial = machine.sendInitial(Rendering([1]))
        #expect(lateInitial == nil)
        let lateFinish = machine.finish(trailer: nil)
        #expect(lateFinish == nil)
        let secondDrop = machine.drop()
        #expect(secondDrop == nil)
        let lateWake = machine.wakeDeferred(now: 0)
        #expect(lateWake == nil)
        let mustNotWait = machine.wait(2)
        #expect(!mustNotWait)
        #expect(machine.phase == .ended)
    }
}
