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

    @Test func aBatchStopsAtItsByteBoundButAlwaysTakesTheFirstWrite() {
        var queue = WriteForwarder.Queue<Int>()
        // Items are their own sizes: 3 + 3 fit in 7, a third does not; 10 goes alone.
        for item in [3, 3, 3, 10, 1] { _ = queue.enqueue(item) }
        var batches: [[Int]] = []
        while true {
            let batch = queue.nextBatch(limit: 512, maxBytes: 7) { $0 }
            if batch.isEmpty { break }
            batches.append(batch)
        }
        #expect(batches == [[3, 3], [3], [10], [1]])
        #expect(!queue.sending && queue.items.isEmpty)
        // The count bound still holds under the byte bound.
        for _ in 0..<5 { _ = queue.enqueue(1) }
        #expect(queue.nextBatch(limit: 2, maxBytes: 7) { $0 } == [1, 1])
    }
}
