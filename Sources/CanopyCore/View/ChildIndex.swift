/// The children of one location sorted in one order (an index per location and order, spec §7.1),
/// shared by every view that needs it and kept up to date on each write: O(log *n*) per changed
/// child. Built on first use; dropped when no view uses it.
package final class ChildIndex {
    package let index: QueryIndex
    /// The children in order, each with its current node.
    package private(set) var entries: SortedMap<IndexEntry, Node>
    /// Views (and pins) using the index.
    package var users = 0

    /// Builds the index of `node`'s children. - Complexity: O(*n* log *n*)
    package init(index: QueryIndex, node: Node) {
        self.index = index
        var list: [(entry: IndexEntry, node: Node)] = []
        list.reserveCapacity(node.childCount)
        for (key, child) in node.childMap { list.append((IndexEntry(sortValue: index.sortValue(of: child), key: key), child)) }
        list.sort { $0.entry < $1.entry }
        self.entries = SortedMap(sortedKeys: list.lazy.map(\.entry), values: list.lazy.map(\.node))
    }

    /// Records that child `key` went from `old` to `new` (either may be empty).
    package func update(key: ChildKey, old: Node, new: Node) {
        let oldValue = old.isEmpty ? nil : self.index.sortValue(of: old)
        let newValue = new.isEmpty ? nil : self.index.sortValue(of: new)
        if let oldValue, let newValue, Node.compareValues(oldValue, newValue) == 0 {
            // Same position: only the stored node changes.
            _ = self.entries.modifyValue(forKey: IndexEntry(sortValue: oldValue, key: key)) { $0 = new }
            return
        }
        if let oldValue { self.entries.removeValue(forKey: IndexEntry(sortValue: oldValue, key: key)) }
        if let newValue { self.entries.updateValue(new, forKey: IndexEntry(sortValue: newValue, key: key)) }
    }

    /// Brings the index from `old` to `new` (the whole location changed).
    package func update(from old: Node, to new: Node) {
        let changes = ChildChanges(old: old, new: new, candidates: nil)
        for c in changes.removed { self.update(key: c.key, old: c.node, new: .empty) }
        for c in changes.added { self.update(key: c.key, old: .empty, new: c.node) }
        for c in changes.changed { self.update(key: c.key, old: c.old, new: c.new) }
    }
}

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

    /// How many entries come before the range start / lie before the end of `params`' range.
    package func range(_ params: QueryParams) -> Range<Int> {
        var lo = 0
        var hi = self.count
        if let start = params.start { lo = self.partitionRank { start.excludesAsStart($0) } }
        if let end = params.end { hi = self.partitionRank { end.includesAsEnd($0) } }
        if hi < lo { hi = lo }
        switch params.limit {
        case .first(let n)?: hi = min(hi, lo + n)
        case .last(let n)?: lo = max(lo, hi - n)
        case nil: break
        }
        return lo..<hi
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

    /// The children (key and node) of the ranks in `range`, in order. - Complexity: O(log *n* + *k*)
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

    /// The node a filtered query shows: the children in its window, without the location's
    /// priority. - Complexity: O(log *n* + *k* log *k*)
    package func windowNode(_ params: QueryParams) -> (node: Node, children: [(key: ChildKey, node: Node)]) {
        let children = self.children(in: self.range(params))
        var pairs = children
        pairs.sort { ChildKey.compare($0.key, $1.key) < 0 }
        return (Node.from(children: SortedMap(sortedKeys: pairs.lazy.map(\.key), values: pairs.lazy.map(\.node))), children)
    }
}
