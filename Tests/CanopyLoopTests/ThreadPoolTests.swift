import CanopyLoop
import CanopyTestSupport
import Foundation
import Testing

@Suite("Thread-pool requests", .serialized, .timeLimit(.minutes(1)))
struct ThreadPoolTests {
    @Test("work runs off the loop, its completion on the loop, and drain waits for it")
    func workAndCompletion() throws {
        try withLoop(EventLoop()) { loop in
            loop.drain()
            let loopThread = currentThreadID()
            let result = LoopBound<(workThread: UInt, onLoop: Bool)?>(nil, loop: loop)
            weak var weakCapture: Tracker?
            do {
                let capture = Tracker()
                weakCapture = capture
                loop.runInThreadPool(
                    { () -> UInt in
                        _ = capture
                        return currentThreadID()
                    },
                    then: { workThread in
                        _ = capture
                        result.value = (workThread, loop.inLoop)
                    })
            }
            #expect(weakCapture != nil)  // the request keeps its closures alive while in flight
            loop.drain()
            let outcome = try #require(result.value)
            #expect(outcome.workThread != loopThread)
            #expect(outcome.onLoop)
            #expect(weakCapture == nil)  // and releases them once the completion has run
        }
    }

    @Test("shutdown waits for in-flight work and still runs its completion")
    func shutdownWaitsForWork() throws {
        let loop = try EventLoop()
        try loop.startThread(name: "pool-test")
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let completed = Locked(false)
        loop.execute {
            loop.runInThreadPool(
                {
                    started.signal()
                    _ = gate.wait(timeout: .now() + defaultWaitSeconds)
                    return 42
                }, then: { value in completed.withLock { $0 = value == 42 } })
        }
        try started.wait(for: "started")
        let reports = Locked<LoopCloseReport?>(nil)
        let closer = TestThread { reports.withLock { $0 = loop.shutdown() } }
        try waitUntil("!loop.isAcceptingJobs") { !loop.isAcceptingJobs }
        #expect(loop.closeReport == nil)  // still waiting for the work
        gate.signal()
        try closer.join()
        #expect(completed.value)
        #expect(reports.value?.isClean == true)
    }
}
