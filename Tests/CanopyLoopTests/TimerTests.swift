import CanopyLoop
import CanopyTestSupport
import Foundation
import Testing

@Suite("Timers", .serialized, .timeLimit(.minutes(1)))
struct TimerTests {
    @Test("a zero-delay timer fires on the next drain, once, then closes its handle")
    func oneShotFiresAndCloses() throws {
        try withLoop(EventLoop()) { loop in
            loop.drain()
            let baseline = loop.openHandleCount
            let fired = LoopBound(0, loop: loop)
            let timer = loop.schedule(after: .zero) { fired.value += 1 }
            #expect(loop.openHandleCount == baseline + 1)
            #expect(timer.isActive)
            #expect(fired.value == 0)
            loop.drain()
            #expect(fired.value == 1)
            #expect(!timer.isActive)
            #expect(loop.openHandleCount == baseline)
            loop.drain()
            #expect(fired.value == 1)
        }
    }

    @Test("a timer's callback and captures are released once it has fired or been cancelled")
    func timersReleaseCallbacks() throws {
        try withLoop(EventLoop()) { loop in
            loop.drain()
            weak var firedCapture: Tracker?
            weak var cancelledCapture: Tracker?
            let fired = LoopBound(false, loop: loop)
            do {
                let first = Tracker()
                let second = Tracker()
                firedCapture = first
                cancelledCapture = second
                loop.schedule(after: .zero) {
                    _ = first
                    fired.value = true
                }
                loop.schedule(after: .zero) {
                    _ = second
                    Issue.record("cancelled timer fired")
                }.cancel()
            }
            #expect(cancelledCapture == nil)  // cancel on the loop thread drops the callback at once
            #expect(firedCapture != nil)
            loop.drain()
            #expect(fired.value)
            #expect(firedCapture == nil)
            #expect(loop.openHandleCount == 1)
        }
    }

    @Test("a repeating timer fires until its own callback cancels it")
    func repeatingUntilCancelled() throws {
        let loop = try EventLoop()
        try loop.startThread(name: "repeat-test")
        let done = DispatchSemaphore(value: 0)
        let fires = Locked(0)
        loop.execute {
            let timer = LoopBound<LoopTimer?>(nil, loop: loop)
            timer.value = loop.schedule(after: .milliseconds(1), repeating: .milliseconds(1)) {
                if fires.withLock({
                    $0 += 1
                    return $0
                }) == 3 {
                    timer.value?.cancel()  // on the loop thread: no further fire
                    done.signal()
                }
            }
        }
        try done.wait(for: "done")
        #expect(loop.shutdown()?.isClean == true)
        #expect(fires.value == 3)
    }

    @Test("a delayed timer does not fire early and runs on the loop thread")
    func delayIsRespected() throws {
        try withLoop(EventLoop(), thread: "delay-test") { loop in
            let done = DispatchSemaphore(value: 0)
            let onLoop = Locked(false)
            let start = ContinuousClock.now
            loop.scheduleFromAnyThread(after: .milliseconds(20)) {
                onLoop.withLock { $0 = loop.inLoop }
                done.signal()
            }
            try done.wait(for: "done")
            let elapsed = ContinuousClock.now - start
            #expect(elapsed >= .milliseconds(19), "fired after \(elapsed)")  // libuv counts whole ms
            #expect(onLoop.value)
        }
    }

    @Test("a timer armed and cancelled from another thread never fires")
    func cancelFromAnotherThread() throws {
        let loop = try EventLoop()
        try loop.startThread(name: "cancel-test")
        let fired = Locked(false)
        let timer = loop.scheduleFromAnyThread(after: .seconds(3_600)) { fired.withLock { $0 = true } }
        timer.cancel()
        let state = Locked<(active: Bool, handles: Int)?>(nil)
        loop.execute { state.withLock { $0 = (timer.isActive, loop.openHandleCount) } }
        let report = loop.shutdown()
        #expect(report?.isClean == true)
        #expect(state.value?.active == false)
        #expect(fired.value == false)
    }

    @Test("a timer scheduled while shutdown runs the last jobs is inactive and never fires")
    func scheduleDuringShutdown() throws {
        let loop = try EventLoop()
        loop.drain()
        let fired = Locked(false)
        let active = Locked<Bool?>(nil)
        loop.execute {
            let timer = loop.schedule(after: .zero) { fired.withLock { $0 = true } }
            active.withLock { $0 = timer.isActive }
        }
        let report = loop.shutdown()
        #expect(report?.isClean == true)
        #expect(report?.jobsRunDuringShutdown == 1)
        #expect(active.value == false)
        #expect(fired.value == false)
        let late = loop.scheduleFromAnyThread(after: .zero) { fired.withLock { $0 = true } }
        #expect(loop.drain() == 0)
        #expect(fired.value == false)
        _ = late
    }
}
