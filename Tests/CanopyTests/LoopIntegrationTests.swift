import CanopyLoop
import CanopyTestSupport
import Foundation
import Synchronization
import Testing

@testable import Canopy

/// Fire-and-forget writes (the synchronous `setValue`), which async code cannot call directly
/// because there the `async` overload is chosen.
func write(_ ref: DatabaseReference, values: some Sequence<Int>) throws {
    for value in values { try ref.queueSetValue(value) }
}

@Suite("The database loop")
struct LoopIntegrationTests {
    @Test("every observer callback and completion runs on the loop thread")
    func callbacksOnLoopThread() async throws {
        let db = try Database.inMemory()
        defer { db.close() }
        let loop = db.core.loop
        let onLoop = Locked<[Bool]>([])
        let ref = db.reference(withPath: "a")
        ref.observe(.value) { _ in onLoop.withLock { $0.append(loop.inLoop) } }
        ref.child("x").observe(.childAdded) { _ in onLoop.withLock { $0.append(loop.inLoop) } }
        try await ref.child("x/y").setValue(1)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            ref.setValue(["x": ["z": 2]]) { _, _ in
                onLoop.withLock { $0.append(loop.inLoop) }
                done.resume()
            }
        }
        _ = try await ref.getData()
        #expect(!loop.inLoop)
        #expect(onLoop.value.count >= 5)
        #expect(onLoop.value.allSatisfy { $0 })
    }

    @Test("an observer removed from another thread receives nothing more")
    func noEventsAfterRemoval() async throws {
        let db = try Database.inMemory()
        defer { db.close() }
        let seen = Locked<[JSONValue]>([])
        let ref = db.reference(withPath: "counter")
        let handle = ref.observe(.value) { snapshot in seen.withLock { $0.append(snapshot.json) } }
        try await ref.setValue(1)
        ref.removeObserver(withHandle: handle)
        try write(ref, values: 2...50)
        _ = try await ref.getData()
        #expect(seen.value == [.null, 1])
        #expect(await self.registrationCount(db) == 0)
    }

    @Test("closing stops the loop thread, closes every handle and cancels observers")
    func cleanShutdown() throws {
        let db = try Database.inMemory()
        let cancelled = Locked<[DatabaseError]>([])
        db.reference(withPath: "a").observe(
            .value, with: { _ in },
            withCancel: { error in
                cancelled.withLock { $0.append(error as! DatabaseError) }
            })
        try db.reference(withPath: "a").queueSetValue(1)
        db.close()
        let report = try #require(db.core.loop.closeReport)
        #expect(report.loopCloseResult == 0)
        #expect(report.handlesLeft == 0)
        #expect(report.isClean)
        #expect(db.core.loop.isThreadJoined)
        #expect(cancelled.value.map(\.code) == [.closed])
        #expect(throws: DatabaseError.self) { try db.reference(withPath: "a").queueSetValue(2) }
    }

    @Test("closing a database in drain mode leaves no handle open")
    func cleanShutdownManual() throws {
        let db = try manualDatabase()
        db.reference().observe(.value) { _ in }
        db.drain()
        db.close()
        #expect(db.core.loop.closeReport?.isClean == true)
    }

    @Test("writers flooding from several threads are held back: the inbox stays bounded")
    func boundedUnderFlood() async throws {
        var configuration = Database.Configuration()
        configuration.inboxCapacity = 64
        let db = try Database.inMemory(configuration)
        defer { db.close() }
        let threads = 4
        let writesPerThread = 5_000
        await withTaskGroup(of: Void.self) { group in
            for t in 0..<threads {
                group.addTask {
                    let ref = db.reference(withPath: "t\(t)")
                    try? write(ref, values: 0..<writesPerThread)
                }
            }
        }
        let snapshot = try await db.reference().getData()
        for t in 0..<threads {
            #expect(snapshot.childSnapshot(forPath: "t\(t)").json == .int(Int64(writesPerThread - 1)))
        }
        let statistics = db.core.loop.statistics
        #expect(statistics.highWaterMark <= 64)
        #expect(statistics.producerWaits > 0)
    }

    @Test("writes from each thread apply in order, each write's events before the next write")
    func perThreadOrder() async throws {
        let db = try Database.inMemory()
        defer { db.close() }
        let threads = 4
        let writes = 2_000
        let seen = Locked<[[Int64]]>(Array(repeating: [], count: threads))
        for t in 0..<threads {
            db.reference(withPath: "t\(t)").observe(.value) { snapshot in
                if let v = snapshot.json.int64Value { seen.withLock { $0[t].append(v) } }
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for t in 0..<threads {
                group.addTask {
                    let ref = db.reference(withPath: "t\(t)")
                    try? write(ref, values: 0..<writes)
                }
            }
        }
        _ = try await db.reference().getData()
        for t in 0..<threads {
            #expect(seen.value[t] == (0..<Int64(writes)).map { $0 })
        }
    }

    @Test("a write made inside a callback raises its events after the current batch")
    func reentrantWrite() throws {
        let db = try manualDatabase()
        defer { db.close() }
        var log: [String] = []
        let x = db.reference(withPath: "x")
        let y = db.reference(withPath: "y")
        x.observe(.value) { snapshot in
            log.append("A x=\(snapshot.json.jsonString())")
            if snapshot.json == 1 { try? y.queueSetValue(1) }
        }
        x.observe(.value) { snapshot in log.append("B x=\(snapshot.json.jsonString())") }
        y.observe(.value) { snapshot in log.append("C y=\(snapshot.json.jsonString())") }
        db.drain()
        log.removeAll()
        try x.queueSetValue(1)
        db.drain()
        #expect(log == ["A x=1", "B x=1", "C y=1"])
    }

    @Test("an observer removed inside a callback gets nothing more, not even the current write's events")
    func removalInsideCallback() throws {
        let db = try manualDatabase()
        defer { db.close() }
        let ref = db.reference(withPath: "x")
        var second: DatabaseHandle = 0
        var log: [String] = []
        ref.observe(.value) { snapshot in
            log.append("first \(snapshot.json.jsonString())")
            if snapshot.json == 1 { ref.removeObserver(withHandle: second) }
        }
        second = ref.observe(.value) { snapshot in log.append("second \(snapshot.json.jsonString())") }
        db.drain()
        try ref.queueSetValue(1)
        try ref.queueSetValue(2)
        db.drain()
        #expect(log == ["first null", "second null", "first 1", "first 2"])
    }

    @Test("an AsyncSequence of events removes its observer when the consuming task is cancelled")
    func asyncSequenceCancellation() async throws {
        let db = try Database.inMemory()
        defer { db.close() }
        let ref = db.reference(withPath: "feed")
        let received = Locked<[String]>([])
        let task = Task {
            for try await event in ref.events(.childAdded) {
                received.withLock { $0.append(event.snapshot.key ?? "") }
            }
        }
        try await ref.child("a").setValue(1)
        // Wait until the first event arrived, then cancel the consumer.
        while received.value.isEmpty { await Task.yield() }
        #expect(await self.registrationCount(db) == 1)
        task.cancel()
        _ = await task.result
        // Removal is queued behind the cancellation; a read afterwards observes it.
        #expect(await self.registrationCount(db) == 0)
        try await ref.child("b").setValue(2)
        #expect(received.value == ["a"])
    }

    @Test("an AsyncSequence ends with an error when the database closes")
    func asyncSequenceEndsOnClose() async throws {
        let db = try Database.inMemory()
        let ref = db.reference(withPath: "feed")
        let stream = ref.values()
        var iterator = stream.makeAsyncIterator()
        let first = try await iterator.next()
        #expect(first?.exists() == false)
        db.close()
        await #expect(throws: DatabaseError.self) { _ = try await iterator.next() }
    }

    private func registrationCount(_ db: Database) async -> Int {
        await withCheckedContinuation { continuation in
            db.core.read { engine in continuation.resume(returning: engine.registrationCount) }
        }
    }
}
