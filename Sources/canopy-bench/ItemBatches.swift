/// `count` push-style children (`pushStyleKey(i)` → `item(i)`) in batches of ``size``, each a
/// dictionary for one `updateChildValues`.
struct ItemBatches: Sequence, IteratorProtocol {
    let count: Int
    static let size = 50_000
    let item: (Int) -> Any
    private var start = 0

    init(count: Int, item: @escaping (Int) -> Any) {
        self.count = count
        self.item = item
    }

    mutating func next() -> [AnyHashable: Any]? {
        guard self.start < self.count else { return nil }
        let end = Swift.min(self.count, self.start + Self.size)
        var values: [AnyHashable: Any] = [:]
        values.reserveCapacity(end - self.start)
        for i in self.start..<end { values[pushStyleKey(i)] = self.item(i) }
        self.start = end
        return values
    }
}
