/// The children of a location in a view's order, with ranks: the location's own key-ordered map
/// when the order is key order (the key index, or priorities when no child has one), else a
/// ``ChildIndex``.
package enum ChildOrder {
    case keys(SortedMap<ChildKey, Node>)
    case index(SortedMap<IndexEntry, Node>)

    package var count: Int {
        switch self {
        case .keys(let map): return map.count
        case .index(let entries): return entries.count
        }
    }

    package func partitionRank(_ isBelow: (IndexEntry) -> Bool) -> Int {
        switch self {
        case .keys(let map): return map.partitionRank { isBelow(IndexEntry(sortValue: .empty, key: $0)) }
        case .index(let entries): return entries.partitionRank(isBelow)
        }
    }

    /// The rank of `entry`, which must be present.
    package func rank(of entry: IndexEntry) -> Int {
        switch self {
        case .keys(let map): return map.lowerBoundRank(entry.key)
        case .index(let entries): return entries.lowerBoundRank(entry)
        }
    }

    package func key(atRank rank: Int) -> ChildKey {
        switch self {
        case .keys(let map): return map.element(atRank: rank).key
        case .index(let entries): return entries.element(atRank: rank).key.key
        }
    }

    /// Keys of the ranks in `range`, in order.
    package func keys(in range: Range<Int>) -> [ChildKey] {
        self.children(in: range).map(\.key)
    }

    /// The children (key and node) of the ranks in `range`, in order.
    ///
    /// - Complexity: O(log *n* + *k*)
    package func children(in range: Range<Int>) -> [(key: ChildKey, node: Node)] {
        guard !range.isEmpty else { return [] }
        var result: [(key: ChildKey, node: Node)] = []
        result.reserveCapacity(range.count)
        switch self {
        case .keys(let map):
            var iterator = map.elements(fromRank: range.lowerBound).makeIterator()
            while result.count < range.count, let e = iterator.next() { result.append((e.key, e.value)) }
        case .index(let entries):
            var iterator = entries.elements(fromRank: range.lowerBound).makeIterator()
            while result.count < range.count, let e = iterator.next() { result.append((e.key.key, e.value)) }
        }
        return result
    }
}
