import Testing

@testable import CanopyServer

/// The slow-client clock's transitions: a client is cut off by a tick only after a whole tick
/// interval without progress, never while it keeps taking what is sent.
@Suite("Stall clock")
struct StallClockTests {
    @Test("a client that takes nothing is cut off at the second tick; one that keeps reading never is")
    func verdicts() {
        var clock = StallClock()
        #expect(clock.queued() == .arm)
        #expect(clock.queued() == .none, "one tick at a time")
        #expect(clock.tick() == .arm, "a fresh start gets a whole interval")
        #expect(clock.tick() == .cutOff)
        #expect(clock.phase == .stalled)
        #expect(clock.queued() == .none && clock.progressed(drained: false) == .none && clock.tick() == .none)

        var reading = StallClock()
        _ = reading.queued()
        for _ in 0..<5 {
            #expect(reading.progressed(drained: false) == .none)
            #expect(reading.tick() == .arm)
        }
        #expect(reading.phase == .draining(progressed: false))
    }

    @Test("a drained client is idle: its tick does nothing and is not re-armed; the next write re-arms it")
    func idle() {
        var clock = StallClock()
        _ = clock.queued()
        #expect(clock.progressed(drained: true) == .none)
        #expect(clock.phase == .idle)
        #expect(clock.tick() == .none)
        #expect(!clock.armed)
        #expect(clock.queued() == .arm)
        #expect(clock.tick() == .arm)
        #expect(clock.tick() == .cutOff)
    }

    @Test("a stopped clock never cuts off")
    func stopped() {
        var clock = StallClock()
        _ = clock.queued()
        clock.stop()
        #expect(clock.tick() == .none)
        #expect(clock.tick() == .none)
    }
}
