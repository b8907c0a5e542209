import CanopyLoop
import CanopyTestSupport
import Foundation
import Testing

/// Where the loop lets go of the jobs it has run: while it is behind (a turn's worth of jobs or half
/// its inbox queued), the
/// next producer on another thread releases them (what they captured was mostly allocated there);
/// otherwise, and once nothing is queued, the loop releases them itself, so they never outlive the
/// work.
@Suite("Releasing finished jobs", .serialized, .timeLimit(.minutes(1)))
struct FinishedJobsTests {
    /// Records the thread its last reference is released on.
    final class Probe: Sendable {
        /// Called from `deinit` with the releasing thread.
        let record: @Sendable (UInt) -> Void

        init(record: @escaping @Sendable (UInt) -> Void) { self.record = record }

        deinit {
            self.record(currentThreadID())
        }
    }

    /// Where a job's capture and a value it retired were released, and the thread job A ran on.
    final class Releases: Sendable {
        let job = Locked<UInt?>(nil)
        let retired = Locked<UInt?>(nil)
        let loopThread = Locked<UInt?>(nil)
        let jobReleased = DispatchSemaphore(value: 0)
        let retiredReleased = DispatchSemaphore(value: 0)
        let aRunning = DispatchSemaphore(value: 0)
        let goA = DispatchSemaphore(value: 0)

        func waitForBoth() throws {
            try self.jobReleased.wait(for: "the job's capture to be released", seconds: 5)
            try self.retiredReleased.wait(for: "the retired value to be released", seconds: 5)
        }
    }

    /// Posts job A, which holds the only reference to a probe, hands the loop another probe to
    /// release with it, and waits for `goA`; returns once A runs.
    private static func startJobA(_ loop: EventLoop) throws -> Releases {
        let releases = Releases()
        do {
            let probe = Probe { thread in
                releases.job.withLock { $0 = thread }
                releases.jobReleased.signal()
            }
            loop.execute {
                _ = probe
                // A value the job replaced goes with it.
                loop.releaseWithFinishedJobs(
                    Probe { thread in
                        releases.retired.withLock { $0 = thread }
                        releases.retiredReleased.signal()
                    })
                releases.loopThread.withLock { $0 = currentThreadID() }
                releases.aRunning.signal()
                releases.goA.waitOrStop("the test to queue B")
            }
        }
        try releases.aRunning.wait(for: "job A to start")
        return releases
    }

    /// ``startJobA(_:)``, then queues job B behind A, lets A finish and returns once B runs (so
    /// A's batch has ended); B then waits for the returned `goB` (`what` names who signals it).
    private static func runAThenHoldB(_ loop: EventLoop, until what: String) throws -> (releases: Releases, goB: DispatchSemaphore) {
        let (bRunning, goB) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let releases = try Self.startJobA(loop)
        // A finishes while B is queued.
        loop.execute {
            bRunning.signal()
            goB.waitOrStop(what)
        }
        releases.goA.signal()
        try bRunning.wait(for: "job B to start")
        return (releases, goB)
    }

    @Test("while jobs are queued, the next producer on another thread releases the finished ones")
    func producerReleasesFinishedJobs() throws {
        try withLoop(EventLoop(inboxCapacity: 2), thread: "finished-jobs") { loop in
            // A finishes while B is queued, so its batch is left to the producers; B running means
            // A's batch has ended and was handed over.
            let (releases, goB) = try Self.runAThenHoldB(loop, until: "the test to queue C")
            #expect(releases.job.value == nil)
            #expect(releases.retired.value == nil)
            loop.execute {}
            try releases.waitForBoth()
            #expect(releases.job.value == currentThreadID())
            #expect(releases.retired.value == currentThreadID())
            goB.signal()
        }
    }

    @Test("with nothing queued, the loop releases the finished jobs itself")
    func loopReleasesWhenIdle() throws {
        try withLoop(EventLoop(inboxCapacity: 2), thread: "finished-idle") { loop in
            let releases = try Self.startJobA(loop)
            // A finishes while B is queued (its batch is left to the producers), then B runs and
            // nothing else comes: the loop takes A back and releases it.
            loop.execute {}
            releases.goA.signal()
            try releases.waitForBoth()
            #expect(releases.job.value != nil)
            #expect(releases.job.value == releases.loopThread.value)
            #expect(releases.retired.value == releases.loopThread.value)
        }
    }

    @Test("while the loop keeps up (less than half its inbox, and less than a turn, queued), it releases finished jobs itself")
    func loopKeepsUp() throws {
        try withLoop(EventLoop(inboxCapacity: 64), thread: "finished-keeps-up") { loop in
            // B running means A's batch has ended: with one job queued, the loop let go of it.
            let (releases, goB) = try Self.runAThenHoldB(loop, until: "the test to check")
            try releases.waitForBoth()
            #expect(releases.job.value == releases.loopThread.value)
            #expect(releases.retired.value == releases.loopThread.value)
            goB.signal()
        }
    }

    @Test("in drain mode, every job run is released by the end of the drain")
    func drainReleases() throws {
        try withLoop(EventLoop(jobsPerTurn: 1)) { loop in
            loop.drain()
            let releases = Locked(0)
            for _ in 0..<10 {
                let probe = Probe { _ in releases.withLock { $0 += 1 } }
                loop.execute { _ = probe }
            }
            #expect(releases.value == 0)
            #expect(loop.drain() == 10)
            #expect(releases.value == 10)
        }
    }

    @Test("jobs from several producers all run once, in each producer's order, and are all released")
    func manyProducers() throws {
        let loop = try EventLoop(inboxCapacity: 64, jobsPerTurn: 16)
        try loop.startThread(name: "finished-many")
        let ran = Locked(0)
        let releases = Locked(0)
        let order = Locked([Int](repeating: -1, count: 4))
        let outOfOrder = Locked(0)
        try spawnThreads(4) { producer in
            for sequence in 0..<5_000 {
                let probe = Probe { _ in releases.withLock { $0 += 1 } }
                loop.execute {
                    _ = probe
                    ran.withLock { $0 += 1 }
                    order.withLock { last in
                        if last[producer] != sequence - 1 { outOfOrder.withLock { $0 += 1 } }
                        last[producer] = sequence
                    }
                }
            }
        }.joinAll()
        #expect(loop.shutdown()?.isClean == true)
        #expect(ran.value == 20_000)
        #expect(outOfOrder.value == 0)
        #expect(releases.value == 20_000)
    }
}
