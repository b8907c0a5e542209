/// The children of one location in one order, each with the number its aggregated field holds,
/// in a B+tree that caches an ``AggregateSummary`` (count, numeric count, sums, min, max) per
/// subtree: insertion, removal and a change of value cost O(log *n*), and the summary of any range
/// of ranks combines O(log *n*) cached summaries.
///
/// A tree of its own, not ``SortedMap`` with an extra field: plain indexes and views (every
/// observer, every one-shot query) never pay for summaries; only a location with a live aggregate
/// has one of these, next to (not instead of) its ``ChildIndex``. It has a single owner (its
/// ``AggregateIndex``, on the loop thread), so nodes are mutated in place, without copy-on-write.
package struct AggregateTree {
    private(set) var root = AggregateTreeNode(keys: [], values: [])

    package init() {}

    /// Builds the tree of elements already sorted by strictly increasing entry.
    /// - Complexity: O(*n*)
    package init(sorted elements: [(entry: IndexEntry, value: AggregateNumber?)]) {
        guard elements.count > AggregateTreeNode.capacity else {
            self.root = AggregateTreeNode(
                keys: ContiguousArray(elements.map { AggregateTreeKey($0.entry) }), values: ContiguousArray(elements.map(\.value)))
            return
        }
        var level = ContiguousArray<AggregateTreeNode>()
        var start = 0
        let capacity = AggregateTreeNode.capacity
        while start < elements.count {
            let remaining = elements.count - start
            let take = bulkNodeWidth(remaining: remaining, capacity: capacity, minWidth: AggregateTreeNode.minWidth)
            let slice = elements[start..<(start + take)]
            level.append(
                AggregateTreeNode(
                    keys: ContiguousArray(slice.map { AggregateTreeKey($0.entry) }), values: ContiguousArray(slice.map(\.value))))
            start += take
        }
        while level.count > 1 {
            var next = ContiguousArray<AggregateTreeNode>()
            var i = 0
            while i < level.count {
                let remaining = level.count - i
                let take = bulkNodeWidth(remaining: remaining, capacity: capacity, minWidth: AggregateTreeNode.minWidth)
                next.append(AggregateTreeNode(children: ContiguousArray(level[i..<(i + take)])))
                i += take
            }
            level = next
        }
        self.root = level[0]
    }

    /// The number of children.
    package var count: Int { self.root.summary.count }

    /// The summary of every child.
    package var summary: AggregateSummary { self.root.summary }

    /// Inserts `entry` with `value`, or replaces its value when present.
    /// - Complexity: O(log *n*)
    package mutating func set(_ entry: IndexEntry, _ value: AggregateNumber?) {
        self.set(AggregateTreeKey(entry), value)
    }

    /// Inserts `key` with `value`, or replaces its value when present; returns the value replaced
    /// (`.some(nil)` for an entry without a number), `nil` when the entry is new.
    @discardableResult
    mutating func set(_ key: AggregateTreeKey, _ value: AggregateNumber?) -> AggregateNumber?? {
        let root = self.root
        let (insertion, split) = AggregateTreeNode.insert(into: root, key, value)
        if let split { self.root = AggregateTreeNode(children: [root, split]) }
        if case .replaced(let old) = insertion { return .some(old) }
        return nil
    }

    /// Removes `entry` if present.
    /// - Complexity: O(log *n*)
    package mutating func remove(_ entry: IndexEntry) {
        self.remove(AggregateTreeKey(entry))
    }

    /// Removes `key` if present; returns its value (`.some(nil)` for an entry without a number),
    /// `nil` when absent.
    @discardableResult
    mutating func remove(_ key: AggregateTreeKey) -> AggregateNumber?? {
        let root = self.root
        guard let old = AggregateTreeNode.remove(from: root, key) else { return nil }
        if !root.isLeaf && root.children.count == 1 { self.root = root.children[0] }
        return old
    }

    /// The number of leading entries for which `isBelow` holds (a predicate true on a prefix).
    /// - Complexity: O(log *n* · B)
    package func partitionRank(_ isBelow: (IndexEntry) -> Bool) -> Int {
        var node = self.root
        var rank = 0
        while true {
            let low = node.partition(isBelow)
            if node.isLeaf { return rank + low }
            if low == 0 { return rank }
            for j in 0..<(low - 1) { rank += node.sums[j].count }
            node = node.children[low - 1]
        }
    }

    /// The summary of the children of ranks `range`.
    /// - Complexity: O(log *n* · B)
    package func summary(ranks range: Range<Int>) -> AggregateSummary {
        AggregateTreeNode.summary(of: self.root, range.lowerBound, range.upperBound)
    }

    /// Every element in order. For tests and diagnostics.
    package var elements: [(entry: IndexEntry, value: AggregateNumber?)] {
        var result: [(entry: IndexEntry, value: AggregateNumber?)] = []
        func walk(_ node: AggregateTreeNode) {
            if node.isLeaf {
                for i in 0..<node.width { result.append((node.keys[i].entry, node.values[i])) }
            } else {
                for child in node.children { walk(child) }
            }
        }
        walk(self.root)
        return result
    }
}

/// A node of ``AggregateTree``: a leaf holds entries and values, an internal node children and a
/// lower bound of each child's entries (`keys[i] <= every entry of children[i] < keys[i + 1]`).
/// Each caches the summary of its subtree, and an internal node a copy of each child's summary in
/// one contiguous array (`sums`), so that combining the summaries of its children (a range query,
/// a rank, a recomputed minimum) reads one block of memory instead of following 32 pointers.
final class AggregateTreeNode {
    static let capacity = 32
    static let minWidth = 8

    // Unchecked exclusivity: a node is only touched by its tree's single owner, on one thread, and
    // never re-entrantly, so the dynamic checks (several per level of every update) cannot fail.
    @exclusivity(unchecked) var keys: ContiguousArray<AggregateTreeKey>
    /// Leaf only.
    @exclusivity(unchecked) var values: ContiguousArray<AggregateNumber?>
    /// Internal only.
    @exclusivity(unchecked) var children: ContiguousArray<AggregateTreeNode>
    /// Internal only: `sums[i] == children[i].summary`.
    @exclusivity(unchecked) var sums: ContiguousArray<AggregateSummary>
    @exclusivity(unchecked) var summary = AggregateSummary()

    init(keys: ContiguousArray<AggregateTreeKey>, values: ContiguousArray<AggregateNumber?>) {
        self.keys = keys
        self.values = values
        self.children = []
        self.sums = []
        self.recompute()
    }

    init(children: ContiguousArray<AggregateTreeNode>) {
        self.children = children
        self.keys = ContiguousArray(children.map { $0.keys[0] })
        self.values = []
        self.sums = ContiguousArray(children.map(\.summary))
        self.recompute()
    }

    var isLeaf: Bool { self.children.isEmpty }
    var width: Int { self.keys.count }

    /// Recomputes the summary from the values or the children's summaries: O(B).
    func recompute() {
        var s = AggregateSummary()
        if self.isLeaf {
            for v in self.values { s.add(v) }
        } else {
            for c in self.sums { s.add(c) }
        }
        self.summary = s
    }

    /// Recomputes only the minimum and maximum (after removing one of them): O(B).
    func recomputeMinMax() {
        self.summary.min = nil
        self.summary.max = nil
        if self.isLeaf {
            for case let v? in self.values { self.summary.mergeMinMax(v, v) }
        } else {
            for c in self.sums { self.summary.mergeMinMax(c.min, c.max) }
        }
    }

    func lowerBound(_ key: AggregateTreeKey) -> Int {
        // Through a buffer pointer: no retain of each probed key.
        self.keys.withUnsafeBufferPointer { keys in leadingCount(keys.count) { AggregateTreeKey.compare(keys[$0], key) < 0 } }
    }

    /// The child that may hold `key`: the last `i` with `keys[i] <= key`, or 0.
    func childIndex(for key: AggregateTreeKey) -> Int {
        self.keys.withUnsafeBufferPointer { keys in
            let low = leadingCount(keys.count) { AggregateTreeKey.compare(key, keys[$0]) >= 0 }
            return low == 0 ? 0 : low - 1
        }
    }

    /// The number of leading keys for which `isBelow` holds.
    func partition(_ isBelow: (IndexEntry) -> Bool) -> Int {
        self.keys.withUnsafeBufferPointer { keys in leadingCount(keys.count) { isBelow(keys[$0].entry) } }
    }

    /// What an insertion did below a node, for its ancestors' summaries.
    enum Insertion {
        case added
        case replaced(AggregateNumber?)
    }

    func apply(_ insertion: Insertion, _ value: AggregateNumber?) {
        if case .replaced(let old) = insertion {
            if self.summary.remove(old) {
                self.summary.add(value)
                self.recomputeMinMax()
                return
            }
        }
        self.summary.add(value)
    }

    /// Inserts into `node`'s subtree; returns what it did and the right sibling split off when it
    /// overflowed.
    static func insert(into node: AggregateTreeNode, _ key: AggregateTreeKey, _ value: AggregateNumber?) -> (
        insertion: Insertion, split: AggregateTreeNode?
    ) {
        if node.isLeaf {
            let i = node.lowerBound(key)
            if i < node.width && AggregateTreeKey.compare(node.keys[i], key) == 0 {
                let old = node.values[i]
                node.values[i] = value
                node.apply(.replaced(old), value)
                return (.replaced(old), nil)
            }
            node.keys.insert(key, at: i)
            node.values.insert(value, at: i)
            node.summary.add(value)
            guard node.width > capacity else { return (.added, nil) }
            let cut = node.width / 2
            let right = AggregateTreeNode(keys: ContiguousArray(node.keys[cut...]), values: ContiguousArray(node.values[cut...]))
            node.keys.removeSubrange(cut...)
            node.values.removeSubrange(cut...)
            node.recompute()
            return (.added, right)
        }
        let c = node.childIndex(for: key)
        if c == 0 && AggregateTreeKey.compare(key, node.keys[0]) < 0 { node.keys[0] = key }
        let child = node.children[c]
        let (insertion, split) = insert(into: child, key, value)
        node.sums[c] = child.summary
        node.apply(insertion, value)
        guard let split else { return (insertion, nil) }
        node.children.insert(split, at: c + 1)
        node.sums.insert(split.summary, at: c + 1)
        node.keys.insert(split.keys[0], at: c + 1)
        guard node.width > capacity else { return (insertion, nil) }
        let cut = node.width / 2
        let right = AggregateTreeNode(children: ContiguousArray(node.children[cut...]))
        node.children.removeSubrange(cut...)
        node.sums.removeSubrange(cut...)
        node.keys.removeSubrange(cut...)
        node.recompute()
        return (insertion, right)
    }

    /// Removes `key` from `node`'s subtree; returns its value (`.some(nil)` for a child without a
    /// number), `nil` when absent.
    static func remove(from node: AggregateTreeNode, _ key: AggregateTreeKey) -> AggregateNumber?? {
        if node.isLeaf {
            let i = node.lowerBound(key)
            guard i < node.width && AggregateTreeKey.compare(node.keys[i], key) == 0 else { return nil }
            node.keys.remove(at: i)
            let old = node.values.remove(at: i)
            if node.summary.remove(old) { node.recomputeMinMax() }
            return .some(old)
        }
        let c = node.childIndex(for: key)
        let child = node.children[c]
        guard let old = remove(from: child, key) else { return nil }
        node.sums[c] = child.summary
        let stale = node.summary.remove(old)
        if node.children[c].width < minWidth { node.rebalance(child: c) }
        if stale { node.recomputeMinMax() }
        return .some(old)
    }

    /// Merges child `c` with a neighbour, or evens the two out when together they overflow. The
    /// node's own summary does not change.
    private func rebalance(child c: Int) {
        guard self.children.count > 1 else { return }
        let l = c > 0 ? c - 1 : c
        let r = l + 1
        let left = self.children[l]
        let right = self.children[r]
        left.keys.append(contentsOf: right.keys)
        if left.isLeaf {
            left.values.append(contentsOf: right.values)
        } else {
            left.children.append(contentsOf: right.children)
            left.sums.append(contentsOf: right.sums)
        }
        if left.width <= Self.capacity {
            left.summary.add(right.summary)
            self.children.remove(at: r)
            self.sums.remove(at: r)
            self.keys.remove(at: r)
            self.sums[l] = left.summary
            if left.width == 0 {
                self.children.remove(at: l)
                self.sums.remove(at: l)
                self.keys.remove(at: l)
            }
            return
        }
        let cut = left.width / 2
        let newRight: AggregateTreeNode
        if left.isLeaf {
            newRight = AggregateTreeNode(keys: ContiguousArray(left.keys[cut...]), values: ContiguousArray(left.values[cut...]))
            left.values.removeSubrange(cut...)
        } else {
            newRight = AggregateTreeNode(children: ContiguousArray(left.children[cut...]))
            left.children.removeSubrange(cut...)
            left.sums.removeSubrange(cut...)
        }
        left.keys.removeSubrange(cut...)
        left.recompute()
        self.children[r] = newRight
        self.sums[r] = newRight.summary
        self.sums[l] = left.summary
        self.keys[r] = newRight.keys[0]
    }

    /// The summary of ranks `lo..<hi` of `node`'s subtree.
    static func summary(of node: AggregateTreeNode, _ lo: Int, _ hi: Int) -> AggregateSummary {
        if lo <= 0 && hi >= node.summary.count { return node.summary }
        var result = AggregateSummary()
        if lo >= hi { return result }
        if node.isLeaf {
            for i in max(lo, 0)..<min(hi, node.width) { result.add(node.values[i]) }
            return result
        }
        var offset = 0
        for (i, sum) in node.sums.enumerated() {
            let n = sum.count
            if offset + n > lo {
                if lo <= offset && hi >= offset + n {
                    result.add(sum)
                } else {
                    result.add(summary(of: node.children[i], lo - offset, hi - offset))
                }
            }
            offset += n
            if offset >= hi { break }
        }
        return result
    }
}
