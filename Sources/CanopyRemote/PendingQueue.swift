import Canopy
/// The unacknowledged writes in the order they were made: append at the end, remove any (the
/// server acknowledges in order, so usually the first), iterate in order. Loop thread only.
///
/// Removal is O(1) amortized: a removed write leaves a hole, skipped by iteration; the array is
/// compacted once holes are the majority.
struct PendingQueue: Sequence {
    private var items: [PendingWrite?] = []
    /// Where each write is in `items`, by id.
    private var positions: [UInt64: Int] = [:]
    /// The first slot that may hold a write.
    private var head = 0

    var count: Int { self.positions.count }
    var isEmpty: Bool { self.positions.isEmpty }

    mutating func append(_ write: PendingWrite) {
        self.positions[write.id] = self.items.count
        self.items.append(write)
    }

    /// Removes `write`; `false` when it is not queued.
    @discardableResult
    mutating func remove(_ write: PendingWrite) -> Bool {
        guard let position = self.positions.removeValue(forKey: write.id) else { return false }
        self.items[position] = nil
        while self.head < self.items.count && self.items[self.head] == nil { self.head += 1 }
        if self.positions.isEmpty {
            self.items.removeAll(keepingCapacity: true)
            self.head = 0
        } else if self.items.count > 64 && self.positions.count * 2 < self.items.count {
            self.items = self.items[self.head...].filter { $0 != nil }
            self.head = 0
            for (index, item) in self.items.enumerated() { self.positions[item!.id] = index }
        }
        return true
    }

    func makeIterator() -> some IteratorProtocol<PendingWrite> {
        self.items[self.head...].lazy.compactMap { $0 }.makeIterator()
    }
}
