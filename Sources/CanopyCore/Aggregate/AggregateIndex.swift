/// The children of one location in one order with the numbers of one field: the summaries of the
/// ranges live aggregates track (``track(_:minMax:node:)``, O(1) per changed child), and, when a
/// user needs one, an ``AggregateTree`` (kept in O(log *n*) per changed child) from which any range
/// is recomputed in O(log *n*), never by a re-scan. Shared by every live aggregate of the location,
/// order and field; dropped with its last user.
///
/// The tree is kept only while something needs it (``retainTree(node:)``): a live aggregate with a
/// limit (its window is a matter of ranks), or a tracked range that keeps a minimum or maximum (a
/// removed minimum is found again in the tree). A live count, sum or average over a range without
/// a limit needs only its tracked range, so its writes touch no tree at all.
package final class AggregateIndex {
    /// What identifies an index at a location: its order and its field (`nil`: counts only).
    package struct Key: Hashable {
        package var index: QueryIndex
        package var field: [ChildKey]?

        package init(index: QueryIndex, field: [ChildKey]?) {
            self.index = index
            self.field = field
        }
    }

    package let key: Key
    // Unchecked exclusivity: an index is only touched on its engine's thread, and never
    // re-entrantly, so the dynamic checks (several per changed child) cannot fail.
    /// The tree, while ``treeUsers`` is positive.
    @exclusivity(unchecked) package private(set) var tree: AggregateTree?
    /// Users needing the tree (one for an index built with it, which keeps it for good).
    @exclusivity(unchecked) private var treeUsers = 0
    /// Live aggregates using the index.
    @exclusivity(unchecked) package var users = 0

    /// Builds the index of `node`'s children: with its tree (kept for good) when `withTree`, else
    /// without one until ``retainTree(node:)``.
    /// - Complexity: O(*n* log *n*) with the tree, else O(1)
    package init(_ key: Key, node: Node, withTree: Bool = true) {
        self.key = key
        if withTree { self.retainTree(node: node) }
    }

    /// Builds the tree of `node` (the index's location now) unless it is kept already, and keeps it
    /// until a matching ``releaseTree()``.
    /// - Complexity: O(*n* log *n*) to build it, else O(1)
    package func retainTree(node: Node) {
        self.treeUsers += 1
        guard self.tree == nil else { return }
        var list: [(entry: IndexEntry, value: AggregateNumber?)] = []
        list.reserveCapacity(node.childCount)
        for (childKey, child) in node.childMap { list.append((self.entry(childKey, child), self.value(of: child))) }
        list.sort { $0.entry < $1.entry }
        self.tree = AggregateTree(sorted: list)
    }

    /// Ends a ``retainTree(node:)``; the last one drops the tree.
    package func releaseTree() {
        self.treeUsers -= 1
        if self.treeUsers <= 0 { self.tree = nil }
    }

    private func entry(_ key: ChildKey, _ child: Node) -> IndexEntry {
        IndexEntry(sortValue: self.key.index.sortValue(of: child), key: key)
    }

    private func value(of child: Node) -> AggregateNumber? {
        guard let field = self.key.field else { return nil }
        return AggregateNumber.of(child, field: field)
    }

    /// Records that child `key` went from `old` to `new` (either may be empty), in the tree and in
    /// every tracked range.
    /// - Complexity: O(log *n*) with a tree, else O(1); plus O(1) per tracked range
    package func update(key: ChildKey, old: Node, new: Node) {
        guard self.tree != nil else {
            self.updateRanges(key: key, old: old, new: new)
            return
        }
        let oldKey = old.isEmpty ? nil : AggregateTreeKey(self.entry(key, old))
        let newKey = new.isEmpty ? nil : AggregateTreeKey(self.entry(key, new))
        let newValue = newKey == nil ? nil : self.value(of: new)
        var oldValue: AggregateNumber?? = nil
        if let oldKey, newKey.map({ AggregateTreeKey.compare(oldKey, $0) != 0 }) ?? true { oldValue = self.tree!.remove(oldKey) }
        if let newKey, let replaced = self.tree!.set(newKey, newValue) { oldValue = replaced }
        for range in self.ranges {
            if let oldKey, let oldValue, range.contains(oldKey) { range.remove(oldValue) }
            if let newKey, range.contains(newKey) { range.add(newValue) }
        }
    }

    /// ``update(key:old:new:)`` without a tree: only the tracked ranges, reading a child's field
    /// only when the child lies in one.
    private func updateRanges(key: ChildKey, old: Node, new: Node) {
        guard !self.ranges.isEmpty else { return }
        if !old.isEmpty { self.forRanges(holding: key, old) { range, value in range.remove(value) } }
        if !new.isEmpty { self.forRanges(holding: key, new) { range, value in range.add(value) } }
    }

    /// Calls `apply` with each tracked range that holds `child` (at `key`) and the child's field,
    /// read once, and only if a range holds it.
    private func forRanges(holding key: ChildKey, _ child: Node, _ apply: (AggregateRange, AggregateNumber?) -> Void) {
        let treeKey = AggregateTreeKey(self.entry(key, child))
        var value: AggregateNumber?? = nil
        for range in self.ranges where range.contains(treeKey) {
            if value == nil { value = .some(self.value(of: child)) }
            apply(range, value!)
        }
    }

    /// Brings the index from `old` to `new` (the whole location changed).
    package func update(from old: Node, to new: Node) {
        let changes = ChildChanges(old: old, new: new, candidates: nil)
        for c in changes.removed { self.update(key: c.key, old: c.node, new: .empty) }
        for c in changes.added { self.update(key: c.key, old: .empty, new: c.node) }
        for c in changes.changed { self.update(key: c.key, old: c.old, new: c.new) }
    }

    /// The summary of the children in the range of `params` (after its limit), from the tree
    /// (which must be kept).
    /// - Complexity: O(log *n*)
    package func summary(_ params: QueryParams) -> AggregateSummary {
        guard let tree = self.tree else { preconditionFailure("AggregateIndex.summary(_:) needs the tree") }
        let ranks = params.ranks(count: tree.count) { tree.partitionRank($0) }
        return tree.summary(ranks: ranks)
    }

    // MARK: - Tracked ranges

    /// Ranges whose summaries ``update(key:old:new:)`` keeps.
    @exclusivity(unchecked) private(set) var ranges: [AggregateRange] = []

    /// Starts keeping the summary of the range of `params` up to date on each write, in O(1) per
    /// changed child instead of O(log *n*) per read; `nil` when `params` has a limit (its window is
    /// a matter of ranks: read it with ``summary(_:)``). The minimum and maximum are kept only
    /// when `minMax` (the range then keeps the tree, see ``retainTree(node:)``). `node` is the
    /// index's location now.
    /// - Complexity: O(log *n*) with a tree, else O(*n*) (one pass over the children)
    package func track(_ params: QueryParams, minMax: Bool, node: Node) -> AggregateRange? {
        guard params.limit == nil else { return nil }
        if minMax { self.retainTree(node: node) }
        let range = AggregateRange(start: params.start, end: params.end, minMax: minMax)
        if self.tree != nil { range.reset(to: self.recount(range)) } else { self.scan(node, into: range) }
        _ = range.takeChanged()
        self.ranges.append(range)
        return range
    }

    /// Adds each of `node`'s children that lies in `range` to it.
    /// - Complexity: O(*n*)
    private func scan(_ node: Node, into range: AggregateRange) {
        for (childKey, child) in node.childMap where range.contains(AggregateTreeKey(self.entry(childKey, child))) {
            range.add(self.value(of: child))
        }
    }

    /// Stops keeping `range`.
    package func untrack(_ range: AggregateRange) {
        let count = self.ranges.count
        self.ranges.removeAll { $0 === range }
        if range.minMax && self.ranges.count < count { self.releaseTree() }
    }

    /// The tracked range of `params` (which has no limit), if one is kept with at least what
    /// `minMax` asks.
    package func trackedRange(_ params: QueryParams, minMax: Bool) -> AggregateRange? {
        guard params.limit == nil else { return nil }
        return self.ranges.first { $0.start == params.start && $0.end == params.end && ($0.minMax || !minMax) }
    }

    /// The summary of the range of `params` from what the index keeps: its tree, or a tracked range
    /// of the same bounds (keeping the minimum and maximum when `minMax`); `nil` when neither.
    /// - Complexity: O(log *n*)
    package func summary(_ params: QueryParams, minMax: Bool) -> AggregateSummary? {
        if self.tree != nil { return self.summary(params) }
        return self.trackedRange(params, minMax: minMax).map { self.summary(of: $0) }
    }

    /// The summary of the range of `params` over `node`'s children, with no live index: one pass
    /// over them, or with a limit a tree built for it.
    /// - Complexity: O(*n*), or O(*n* log *n*) with a limit
    package static func summary(_ key: Key, _ params: QueryParams, of node: Node) -> AggregateSummary {
        let index = AggregateIndex(key, node: node, withTree: params.limit != nil)
        guard params.limit == nil else { return index.summary(params) }
        let range = AggregateRange(start: params.start, end: params.end, minMax: true)
        index.scan(node, into: range)
        return range.summary
    }

    /// The summary of a tracked range now: O(1), or O(log *n*) when its minimum or maximum went
    /// out with a removed child (they are found again in the tree).
    package func summary(of range: AggregateRange) -> AggregateSummary {
        if range.stale && self.tree != nil {
            let found = self.recount(range)
            range.setMinMax(found.min, found.max)
        }
        return range.summary
    }

    private func recount(_ range: AggregateRange) -> AggregateSummary {
        var summary = self.summary(QueryParams(index: self.key.index, start: range.start, end: range.end))
        if !range.minMax {
            summary.min = nil
            summary.max = nil
        }
        return summary
    }
}
