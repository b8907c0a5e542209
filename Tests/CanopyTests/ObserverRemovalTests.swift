import CanopyTestSupport
import Foundation
import Testing

@testable import Canopy

@Suite("Removing observers while events are delivered", .timeLimit(.minutes(1)))
struct ObserverRemovalTests {
    @Test("removeObserver(withHandle:) on another thread: no callback once it has returned")
    func noCallbackAfterRemovalReturns() async throws {
        let db = try Database.inMemory()
        defer { db.close() }
        let ref = db.reference(withPath: "counter")
        let late = Locked(0)
        let delivered = Locked(0)
        for round in 0..<100 {
            let removed = Locked(false)
            let started = Locked(false)
            let handle = ref.observe(.value) { _ in
                started.withLock { $0 = true }
                // A slow callback widens the window a racing removal would fall into.
                usleep(200)
                if removed.value { late.withLock { $0 += 1 } }
                delivered.withLock { $0 += 1 }
            }
            // Another thread keeps the loop delivering while this one removes the observer.
            let writer = Thread { try? write(ref, values: (round * 1_000)..<(round * 1_000 + 200)) }
            writer.start()
            let deadline = Date().addingTimeInterval(10)
            while !started.value {
                try #require(Date() < deadline, "the observer never fired")
                usleep(100)
            }
            ref.removeObserver(withHandle: handle)
            removed.withLock { $0 = true }
        }
        // Everything queued has run once a read made after the writes completes.
        _ = try await ref.getData()
        #expect(delivered.value >= 100)
        #expect(late.value == 0, "\(late.value) callbacks ran after removeObserver(withHandle:) returned")
    }

    @Test("removeAllObservers() on another thread: no callback once it has returned")
    func noCallbackAfterRemoveAllReturns() async throws {
        let db = try Database.inMemory()
        defer { db.close() }
        let ref = db.reference(withPath: "counter")
        let late = Locked(0)
        for round in 0..<50 {
            let removed = Locked(false)
            let started = Locked(false)
            for _ in 0..<3 {
                ref.observe(.value) { _ in
                    started.withLock { $0 = true }
                    usleep(200)
                    if removed.value { late.withLock { $0 += 1 } }
                }
            }
            let writer = Thread { try? write(ref, values: (round * 1_000)..<(round * 1_000 + 100)) }
            writer.start()
            let deadline = Date().addingTimeInterval(10)
            while !started.value {
                try #require(Date() < deadline, "no observer fired")
                usleep(100)
            }
            ref.removeAllObservers()
            removed.withLock { $0 = true }
        }
        _ = try await ref.getData()
        #expect(late.value == 0, "\(late.value) callbacks ran after removeAllObservers() returned")
    }
}
