import CanopyLoop
import CanopyTestSupport
import Foundation
import Testing

@Suite("Driving the loop with run()", .serialized, .timeLimit(.minutes(1)))
struct DrivingTests {
    @Test("run() returns when another thread shuts the loop down")
    func runReturnsOnShutdown() throws {
        let loop = try EventLoop()
        let running = DispatchSemaphore(value: 0)
        let returned = Locked(false)
        let runner = TestThread {
            try? loop.run()
            returned.withLock { $0 = true }
        }
        loop.execute { running.signal() }
        try running.wait(for: "running")  // the job ran, so run() is driving the loop
        #expect(!returned.value)
        let report = loop.shutdown()  // waits until run() has closed the loop
        try runner.join()
        #expect(report?.isClean == true)
        #expect(returned.value)
    }

    @Test("run(stopOn:) returns when the signal arrives")
    func runStopsOnSignal() throws {
        let loop = try EventLoop()
        let running = DispatchSemaphore(value: 0)
        let outcome = Locked<String?>(nil)
        let runner = TestThread {
            do {
                try loop.run(stopOn: [SIGUSR2])
                outcome.withLock { $0 = "returned" }
            } catch {
                outcome.withLock { $0 = "\(error)" }
            }
        }
        loop.execute { running.signal() }
        try running.wait(for: "running")  // handlers are installed before run() runs any job
        kill(getpid(), SIGUSR2)
        try runner.join()
        #expect(outcome.value == "returned")
        #expect(loop.closeReport?.isClean == true)
    }

    @Test("run() on a loop already shut down returns at once")
    func runAfterShutdown() throws {
        let loop = try EventLoop()
        loop.shutdown()
        try loop.run()
        try loop.startThread(name: "never-started")
        #expect(loop.closeReport?.isClean == true)
        #expect(!loop.isThreadJoined)
    }
}
