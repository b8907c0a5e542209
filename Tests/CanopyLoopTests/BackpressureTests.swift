import CanopyLoop
import CanopyTestSupport
import Foundation
import Testing

@Suite("Producer backpressure", .serialized, .timeLimit(.minutes(1)))
struct BackpressureTests {
    @Test("a producer blocks on a full inbox and resumes as the loop drains")
    func producerBlocksUntilDrained() throws {
        try withLoop(EventLoop(inboxCapacity: 4, jobsPerTurn: 2)) { loop in
            loop.drain()
            let producer = TestThread {
                for _ in 0..<10 { loop.execute {} }
            }
            try waitUntil("loop.statistics.waitingProducers == 1") { loop.statistics.waitingProducers == 1 }
            #expect(loop.statistics.queuedJobs == 4)
            #expect(loop.statistics.jobsAccepted == 4)

            var ran = 0
            while ran < 10 { ran += loop.drain() }
            try producer.join()
            let statistics = loop.statistics
            #expect(statistics.jobsRun == 10)
            #expect(statistics.highWaterMark == 4)
            #expect(statistics.producerWaits >= 1)
            #expect(statistics.waitingProducers == 0)
        }
    }

    @Test("a flood from several producers never queues more than the capacity")
    func floodStaysWithinCapacity() throws {
        let loop = try EventLoop(inboxCapacity: 32, jobsPerTurn: 8)
        try loop.startThread(name: "flood-test")
        let producers = 4
        let jobsEach = 10_000
        let accepted = Locked(0)
        try spawnThreads(producers) { _ in
            var mine = 0
            for _ in 0..<jobsEach where loop.execute({}) { mine += 1 }
            accepted.withLock { [mine] in $0 += mine }
        }.joinAll()
        #expect(loop.shutdown()?.isClean == true)
        let statistics = loop.statistics
        #expect(accepted.value == producers * jobsEach)
        #expect(statistics.jobsRun == producers * jobsEach)
        #expect(statistics.highWaterMark <= 32)
        #expect(statistics.highWaterMark > 0)
    }

    @Test("jobs posted from the loop thread never block, even with the inbox full", arguments: [DriveMode.drain, .thread])
    func loopThreadNeverBlocks(mode: DriveMode) throws {
        let loop = try EventLoop(inboxCapacity: 4, jobsPerTurn: 3)
        if mode == .drain { loop.drain() }
        let accepted = Locked(0)
        let ran = Locked(0)
        let done = DispatchSemaphore(value: 0)
        loop.execute {
            for _ in 0..<100 where loop.execute({ ran.withLock { $0 += 1 } }) {
                accepted.withLock { $0 += 1 }
            }
            loop.execute { done.signal() }
        }
        if mode == .drain {
            loop.drain()
        } else {
            try loop.startThread(name: "self-post-test")
        }
        try done.wait(for: "done")
        #expect(loop.shutdown()?.isClean == true)
        #expect(accepted.value == 100)
        #expect(ran.value == 100)
        #expect(loop.statistics.highWaterMark > 4)  // only the loop thread may go past the bound
    }

    @Test("shutdown releases a blocked producer, whose job is refused")
    func shutdownReleasesBlockedProducer() throws {
        let loop = try EventLoop(inboxCapacity: 1)
        loop.drain()
        let ran = Locked([Int]())
        let secondAccepted = Locked<Bool?>(nil)
        let producer = TestThread {
            loop.execute { ran.withLock { $0.append(1) } }
            let accepted = loop.execute { ran.withLock { $0.append(2) } }
            secondAccepted.withLock { $0 = accepted }
        }
        try waitUntil("loop.statistics.waitingProducers == 1") { loop.statistics.waitingProducers == 1 }
        let report = loop.shutdown()  // on the owner, outside drain: closes right here
        try producer.join()
        #expect(report?.isClean == true)
        #expect(report?.jobsRunDuringShutdown == 1)
        #expect(secondAccepted.value == false)
        #expect(ran.value == [1])
    }
}
