import CanopyLoop
import CanopyTestSupport
import Foundation
import Testing

/// The predicate behind `assertOnLoop()`: checked directly, since a failing assertion would stop
/// the test process.
@Suite("Loop confinement checks", .serialized, .timeLimit(.minutes(1)))
struct ConfinementTests {
    @Test("drain mode: false before the first drain, then true on the draining thread and false on others")
    func drainMode() throws {
        try withLoop(EventLoop()) { loop in
            #expect(!loop.isLoopConfinementSatisfied)  // nobody drives the loop yet
            let inJob = Locked<Bool?>(nil)
            loop.execute { inJob.withLock { $0 = loop.isLoopConfinementSatisfied } }
            loop.drain()
            #expect(inJob.value == true)
            #expect(loop.isLoopConfinementSatisfied)  // the draining thread is the loop thread
            let elsewhere = Locked<Bool?>(nil)
            try TestThread { elsewhere.withLock { $0 = loop.isLoopConfinementSatisfied } }.join()
            #expect(elsewhere.value == false)
            loop.assertOnLoop()  // holds: returns
        }
    }

    @Test("dedicated thread: true in its jobs, false on the test thread until the loop has finished")
    func dedicatedThread() throws {
        let loop = try EventLoop()
        try loop.startThread(name: "confinement")
        let inJob = Locked<Bool?>(nil)
        loop.execute { inJob.withLock { $0 = loop.isLoopConfinementSatisfied } }
        #expect(!loop.isLoopConfinementSatisfied)
        #expect(loop.shutdown()?.isClean == true)
        #expect(inJob.value == true)
        // Finished: no thread runs the loop, so closing code may clean up anywhere.
        #expect(loop.isLoopConfinementSatisfied)
    }
}
