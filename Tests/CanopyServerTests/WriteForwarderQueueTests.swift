import Testing

@testable import CanopyServer

/// Every transition of a follower's queue of forwarded writes (``WriteForwarder/Queue``).
@Suite("Forwarded write queue")
struct WriteForwarderQueueTests {
    @Test func oneSenderTakesTheWritesInArrivalOrderAndStopsWhenNoneAreLeft() {
        var queue = WriteForwarder.Queue<Int>()
        // The first write starts the sender; writes queued while it sends do not start another.
        let started = queue.enqueue(1)
        let second = queue.enqueue(2)
        let third = queue.enqueue(3)
        #expect(started && !second && !third)
        let first = queue.nextBatch(limit: 2)
        #expect(first == [1, 2] && queue.sending)
        let next = queue.nextBatch(limit: 2)
        #expect(next == [3] && queue.sending)
        // None left: the sender stops; the next write starts it again.
        let none = queue.nextBatch(limit: 2)
        #expect(none.isEmpty && !queue.sending)
        let again = queue.enqueue(4)
        #expect(again && queue.items == [4])
    }
}
