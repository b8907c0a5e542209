import CanopyLoop
import CanopyTestSupport
import Foundation
import Testing

@Suite("Shutdown", .serialized, .timeLimit(.minutes(1)))
struct ShutdownTests {
    @Test("with a dedicated thread: queued jobs run, every handle closes, uv_loop_close returns 0, the thread is joined")
    func dedicatedThreadShutdown() throws {
        let name = "shutdown-thrd"
        let loop = try EventLoop()
        try loop.startThread(name: name)
        let handles = Locked<Int?>(nil)
        let armed = DispatchSemaphore(value: 0)
        loop.execute {
            loop.schedule(after: .seconds(3_600)) {}
            loop.schedule(after: .seconds(3_600)) {}
            loop.schedule(after: .milliseconds(1), repeating: .milliseconds(1)) {}
            handles.withLock { $0 = loop.openHandleCount }
            armed.signal()
        }
        let ran = Locked(0)
        for _ in 0..<1_000 { loop.execute { ran.withLock { $0 += 1 } } }
        try armed.wait(for: "armed")  // the thread names itself before it runs any job
        #expect(liveThreadNames().contains(name))

        let report = try #require(loop.shutdown())
        #expect(report.loopCloseResult == 0)
        #expect(report.handlesLeft == 0)
        #expect(!report.loopWasAlive)
        #expect(report.isClean)
        #expect(handles.value == 4)  // the wake-up handle and three timers
        #expect(ran.value == 1_000)
        #expect(loop.isThreadJoined)
        #expect(!liveThreadNames().contains(name))
        #expect(loop.closeReport == report)
        #expect(loop.shutdown() == report)  // idempotent
    }

    @Test("in drain mode: accepted jobs run, later ones are refused, the loop closes cleanly")
    func drainModeShutdown() throws {
        let loop = try EventLoop()
        loop.drain()
        loop.schedule(after: .seconds(3_600)) {}
        let ran = Locked(0)
        for _ in 0..<10 { loop.execute { ran.withLock { $0 += 1 } } }
        let report = try #require(loop.shutdown())
        #expect(report.isClean)
        #expect(report.loopCloseResult == 0)
        #expect(report.jobsRunDuringShutdown == 10)
        #expect(ran.value == 10)
        #expect(!loop.execute { ran.withLock { $0 += 1 } })
        #expect(loop.drain() == 0)
        #expect(ran.value == 10)
        #expect(!loop.inLoop)
    }

    @Test("a loop that was never driven shuts down on the calling thread")
    func undrivenShutdown() throws {
        let loop = try EventLoop()
        let ran = Locked(false)
        loop.execute { ran.withLock { $0 = true } }
        #expect(loop.shutdown()?.isClean == true)
        #expect(ran.value)
    }

    @Test("shutdown from a job on the dedicated thread does not deadlock; a later call joins")
    func shutdownFromLoopThread() throws {
        let loop = try EventLoop()
        try loop.startThread(name: "inner-shutdown")
        let inner = Locked<LoopCloseReport??>(nil)
        let done = DispatchSemaphore(value: 0)
        loop.execute {
            let report = loop.shutdown()
            inner.withLock { $0 = .some(report) }
            done.signal()
        }
        try done.wait(for: "done")
        #expect(inner.value == .some(nil))  // from the loop thread it only requests
        let report = loop.shutdown()
        #expect(report?.isClean == true)
        #expect(loop.isThreadJoined)
    }

    @Test("shutdown from a job in drain mode completes within that drain")
    func shutdownFromJobWhileDraining() throws {
        let loop = try EventLoop()
        loop.drain()
        let after = Locked(false)
        loop.execute { loop.shutdown() }
        loop.execute { after.withLock { $0 = true } }  // accepted before shutdown: still runs
        #expect(loop.drain() == 2)
        #expect(loop.closeReport?.isClean == true)
        #expect(after.value)
        #expect(!loop.execute {})
    }

    @Test("concurrent shutdown calls all return the same clean report after the join")
    func concurrentShutdowns() throws {
        let loop = try EventLoop()
        try loop.startThread(name: "many-shutdowns")
        for _ in 0..<100 { loop.execute {} }
        let reports = Locked([LoopCloseReport?]())
        let joinedSeen = Locked([Bool]())
        try spawnThreads(4) { _ in
            let report = loop.shutdown()
            reports.withLock { $0.append(report) }
            joinedSeen.withLock { $0.append(loop.isThreadJoined) }
        }.joinAll()
        #expect(reports.value.count == 4)
        #expect(reports.value.allSatisfy { $0?.isClean == true })
        #expect(joinedSeen.value == [true, true, true, true])
    }

    @Test("jobs that capture their loop do not keep it alive once they have run", arguments: [DriveMode.drain, .thread])
    func jobsCapturingLoopDoNotLeakIt(mode: DriveMode) throws {
        weak var weakLoop: EventLoop?
        do {
            let loop = try EventLoop(jobsPerTurn: 3)
            weakLoop = loop
            if mode == .drain { loop.drain() } else { try loop.startThread(name: "capture-test") }
            for _ in 0..<10 { loop.execute { loop.preconditionInLoop() } }
            if mode == .drain { loop.drain() }
            #expect(loop.shutdown()?.isClean == true)
        }
        #expect(weakLoop == nil)
    }

    @Test("a loop released without shutdown closes itself and frees its jobs")
    func releasedWithoutShutdown() throws {
        weak var weakLoop: EventLoop?
        weak var weakCapture: Tracker?
        do {
            let loop = try EventLoop()
            loop.drain()
            let capture = Tracker()
            weakCapture = capture
            loop.execute { _ = capture }
            loop.schedule(after: .seconds(3_600)) { _ = capture }
            weakLoop = loop
        }
        #expect(weakLoop == nil)
        #expect(weakCapture == nil)
    }
}
