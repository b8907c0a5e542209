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

        /// The sender's next batch, at most `limit` items in arrival order; empty when none are
        /// left (the sender stops, and the next ``enqueue(_:)`` starts one again).
        mutating func nextBatch(limit: Int) -> [Item] {
            let batch = Array(self.items.prefix(limit))
            self.items.removeFirst(batch.count)
            if batch.isEmpty { self.sending = false }
            return batch
        }
    }
}
