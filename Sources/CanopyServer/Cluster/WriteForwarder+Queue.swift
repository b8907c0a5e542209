extension WriteForwarder {
    /// The forwarder's writes in arrival order and whether a batch is on its way: one sender at
    /// a time, so that the leader gets each client's writes in the order it sent them. Generic
    /// over the items, so that a test walks every transition.
    ///
    /// ```
    /// idle ──enqueue──▶ sending ──next batch (items queued)──▶ sending
    ///                      └──next batch (none left)──▶ idle
    /// ```
    struct Queue<Item> {
        private(set) var items: [Item] = []
        private(set) var sending = false

        /// Queues `item`: returns whether the caller starts sending (no batch was on its way).
        mutating func enqueue(_ item: Item) -> Bool {
            self.items.append(item)
            if self.sending { return false }
            self.sending = true
            return true
        }

        /// The sender's next batch in arrival order: at most `limit` items whose `size` adds up
        /// to at most `maxBytes`, and always the first item, however large; empty when none are
        /// left (the sender stops, and the next ``enqueue(_:)`` starts one again).
        mutating func nextBatch(limit: Int, maxBytes: Int = .max, size: (Item) -> Int = { _ in 0 }) -> [Item] {
            var count = 0
            var bytes = 0
            for item in self.items.prefix(limit) {
                bytes += size(item)
                if count > 0 && bytes > maxBytes { break }
                count += 1
            }
            let batch = Array(self.items.prefix(count))
            self.items.removeFirst(count)
            if batch.isEmpty { self.sending = false }
            return batch
        }
    }
}
