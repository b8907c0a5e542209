import CanopyLoop
import CanopyTestSupport
import Foundation
import Testing

@Suite("Posting jobs with execute", .serialized, .timeLimit(.minutes(1)))
struct EventLoopTests {
    @Test("nothing runs until the loop is drained; then every job runs once, in order")
    func drainRunsQueuedJobs() throws {
        try withLoop(EventLoop()) { loop in
            #expect(loop.drain() == 0)  // makes this thread the loop thread
            let log = LoopBound([Int](), loop: loop)
            for index in 0..<100 {
                #expect(loop.execute { log.withValue { $0.append(index) } })
            }
            #expect(log.value.isEmpty)
            #expect(loop.drain() == 100)
            #expect(log.value == Array(0..<100))
            #expect(loop.drain() == 0)
        }
    }

    @Test("jobs from several threads run in each thread's order, all on the loop thread", arguments: [1, 7, 4_096])
    func perThreadOrder(jobsPerTurn: Int) throws {
        let loop = try EventLoop(inboxCapacity: 1_000, jobsPerTurn: jobsPerTurn)
        try loop.startThread(name: "order-test")
        let producers = 3
        let jobsEach = 20_000
        let log = LoopBound(OrderLog(producers: producers), loop: loop)
        let producerThreads = Locked(Set<UInt>())
        try spawnThreads(producers) { producer in
            producerThreads.withLock { $0.insert(currentThreadID()) }
            for sequence in 0..<jobsEach {
                loop.execute { log.withValue { $0.record(producer, sequence, onLoop: loop.inLoop) } }
            }
        }.joinAll()
        let result = Locked<OrderLog?>(nil)
        loop.execute { result.withLock { $0 = log.value } }
        #expect(loop.shutdown()?.isClean == true)

        let order = try #require(result.value)
        #expect(order.count == producers * jobsEach)
        #expect(order.outOfOrder == 0)
        #expect(order.next == Array(repeating: jobsEach, count: producers))
        #expect(order.offLoop == 0)
        #expect(order.threads.count == 1)
        #expect(order.threads.isDisjoint(with: producerThreads.value))
    }

    @Test("cross-thread jobs run on the thread that drains")
    func drainRunsForeignJobsOnDrainingThread() throws {
        try withLoop(EventLoop()) { loop in
            loop.drain()
            let drainer = currentThreadID()
            let seen = LoopBound(Set<UInt>(), loop: loop)
            try spawnThreads(4) { _ in
                for _ in 0..<250 {
                    loop.execute { seen.withValue { _ = $0.insert(currentThreadID()) } }
                }
            }.joinAll()
            #expect(loop.drain() == 1_000)
            #expect(seen.value == [drainer])
        }
    }

    @Test("10,000 posts from 4 threads coalesce into a single wake-up")
    func wakeupsCoalesce() throws {
        let loop = try EventLoop(jobsPerTurn: 65_536)
        loop.drain()
        try spawnThreads(4) { _ in
            for _ in 0..<2_500 { loop.execute {} }
        }.joinAll()
        #expect(loop.drain() == 10_000)
        let statistics = loop.statistics
        #expect(statistics.wakeupsSent == 1)
        #expect(statistics.wakeupsHandled == 1)
        #expect(statistics.jobsRun == 10_000)
        loop.shutdown()
    }

    @Test("the job budget lets a due timer fire between batches", arguments: [DriveMode.drain, .thread])
    func budgetLetsTimerIn(mode: DriveMode) throws {
        let loop = try EventLoop(jobsPerTurn: 10)
        if mode == .drain { loop.drain() }
        let log = Locked([String]())
        loop.execute {  // the first job arms a timer that is due at once
            log.withLock { $0.append("job 0") }
            loop.schedule(after: .zero) { log.withLock { $0.append("timer") } }
        }
        for index in 1..<100 {
            loop.execute { log.withLock { $0.append("job \(index)") } }
        }
        let done = DispatchSemaphore(value: 0)
        loop.execute { done.signal() }
        if mode == .drain {
            #expect(loop.drain() == 101)
        } else {
            try loop.startThread(name: "budget-test")  // all jobs are queued before it starts
        }
        try done.wait(for: "done")  // shutdown now would run the remaining jobs without giving timers a turn
        #expect(loop.shutdown()?.isClean == true)
        let position = try #require(log.value.firstIndex(of: "timer"))
        #expect((10...20).contains(position), "the timer fired after \(position) jobs")
        #expect(log.value.count == 101)
    }

    @Test("a job posted after shutdown is refused and never runs")
    func executeAfterShutdown() throws {
        let loop = try EventLoop()
        try loop.startThread(name: "refuse-test")
        #expect(loop.shutdown()?.isClean == true)
        let ran = Locked(false)
        #expect(loop.execute { ran.withLock { $0 = true } } == false)
        #expect(ran.value == false)
        #expect(loop.statistics.jobsRejected == 1)
        #expect(loop.isAcceptingJobs == false)
    }
}

/// What the ordering test saw, on the loop thread.
struct OrderLog: Sendable {
    var next: [Int]
    var outOfOrder = 0
    var offLoop = 0
    var count = 0
    var threads = Set<UInt>()

    init(producers: Int) {
        self.next = Array(repeating: 0, count: producers)
    }

    mutating func record(_ producer: Int, _ sequence: Int, onLoop: Bool) {
        if sequence != self.next[producer] { self.outOfOrder += 1 }
        self.next[producer] = sequence + 1
        if !onLoop { self.offLoop += 1 }
        self.threads.insert(currentThreadID())
        self.count += 1
    }
}
