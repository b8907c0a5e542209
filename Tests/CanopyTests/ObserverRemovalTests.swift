import CanopyTestSupport
import Foundation
import Testing

@testable import Canopy

@Suite("Removing observers while events are delivered", .timeLimit(.minutes(1)))
struct ObserverRemovalTests {
    /// `rounds` times: registers `observers` slow `.value` observers, starts a thread that keeps
    /// writing, and once one has fired, calls `remove` on this (non-loop) thread. Returns how
    /// many callbacks ran, and how many of them ran after `remove` had returned.
    static func removeWhileDelivering(
        rounds: Int, observers: Int, remove: (DatabaseReference, [DatabaseHandle]) -> Void
    ) async throws -> (delivered: Int, late: Int) {
        let db = try Database.inMemory()
        defer { db.close() }
        let ref = db.reference(withPath: "counter")
        let late = Locked(0)
        let delivered = Locked(0)
        for round in 0..<rounds {
            let removed = Locked(false)
            let started = Locked(false)
            let handles = (0..<observers).map { _ in
                ref.observe(.value) { _ in
                    started.withLock { $0 = true }
                    // A slow callback widens the window a racing removal would fall into.
                    usleep(200)
                    if removed.value { late.withLock { $0 += 1 } }
                    delivered.withLock { $0 += 1 }
                }
            }
            // Another thread keeps the loop delivering while this one removes the observers.
            let writer = Thread { try? write(ref, values: (round * 1_000)..<(round * 1_000 + 200)) }
            writer.start()
            try waitUntil("an observer to fire", seconds: 10) { started.value }
            remove(ref, handles)
            removed.withLock { $0 = true }
        }
        // Everything queued before it has run once this read completes.
        _ = try await ref.getData()
        return (delivered.value, late.value)
    }

    @Test("removeObserver(withHandle:) on another thread: no callback once it has returned")
    func noCallbackAfterRemovalReturns() async throws {
        let (delivered, late) = try await Self.removeWhileDelivering(rounds: 100, observers: 1) { ref, handles in
            ref.removeObserver(withHandle: handles[0])
        }
        #expect(delivered >= 100)
        #expect(late == 0, "\(late) callbacks ran after removeObserver(withHandle:) returned")
    }

    @Test("removeAllObservers() on another thread: no callback once it has returned")
    func noCallbackAfterRemoveAllReturns() async throws {
        let (delivered, late) = try await Self.removeWhileDelivering(rounds: 50, observers: 3) { ref, _ in
            ref.removeAllObservers()
        }
        #expect(delivered >= 50)
        #expect(late == 0, "\(late) callbacks ran after removeAllObservers() returned")
    }
}
