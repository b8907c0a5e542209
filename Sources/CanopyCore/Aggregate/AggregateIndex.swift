/// The children of one location in one order with the numbers of one field, in an
/// ``AggregateTree``: kept up to date on each write in O(log *n*) per changed child, so a live
/// aggregate over any range of that order is recomputed in O(log *n*), never by a re-scan. Built
/// on first use; shared by every live aggregate of the location, order and field; dropped with its
/// last user.
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
    package private(set) var tree: AggregateTree
    /// Live aggregates using the index.
    package var users = 0

    /// Builds the index of `node`'s children.
    /// - Complexity: O(*n* log *n*)
    package init(_ key: Key, node: Node) {
        self.key = key
        var list: [(entry: IndexEntry, value: AggregateNumber?)] = []
        list.reserveCapacity(node.childCount)
        for (childKey, child) in node.childMap { list.append((Self.entry(key, childKey, child), Self.value(key, of: child))) }
        list.sort { $0.entry < $1.entry }
        self.tree = AggregateTree(sorted: list)
    }

    private static func entry(_ index: Key, _ key: ChildKey, _ child: Node) -> IndexEntry {
        IndexEntry(sortValue: index.index.sortValue(of: child), key: key)
    }

    private static func value(_ index: Key, of child: Node) -> AggregateNumber? {
        guard let field = index.field else { return nil }
        return AggregateNumber.of(child, field: field)
    }

    private func entry(_ key: ChildKey, _ child: Node) -> IndexEntry { Self.entry(self.key, key, child) }

    private func value(of child: Node) -> AggregateNumber? { Self.value(self.key, of: child) }

    /// Records that child `key` went from `old` to `new` (either may be empty), in the tree and in
    /// every tracked range.
    /// - Complexity: O(log *n*), plus O(1) per tracked range
    package func update(key: ChildKey, old: Node, new: Node) {
        let oldKey = old.isEmpty ? nil : AggregateTreeKey(self.entry(key, old))
        let newKey = new.isEmpty ? nil : AggregateTreeKey(self.entry(key, new))
        var oldValue: AggregateNumber?? = nil
        if let oldKey, newKey.map({ AggregateTreeKey.compare(oldKey, $0) != 0 }) ?? true { oldValue = self.tree.remove(oldKey) }
        let newValue = newKey == nil ? nil : self.value(of: new)
        if let newKey, let replaced = self.tree.set(newKey, newValue) { oldValue = replaced }
        guard !self.ranges.isEmpty else { return }
        for range in self.ranges {
            if let oldKey, let oldValue { range.remove(oldKey, oldValue) }
            if let newKey { range.add(newKey, newValue) }
        }
    }

    /// Brings the index from `old` to `new` (the whole location changed).
    package func update(from old: Node, to new: Node) {
        let changes = ChildChanges(old: old, new: new, candidates: nil)
        for c in changes.removed { self.update(key: c.key, old: c.node, new: .empty) }
        for c in changes.added { self.update(key: c.key, old: .empty, new: c.node) }
        for c in changes.changed { self.update(key: c.key, old: c.old, new: c.new) }
    }

    /// The summary of the children in the range of `params` (after its limit).
    /// - Complexity: O(log *n*)
    package func summary(_ params: QueryParams) -> AggregateSummary {
        let tree = self.tree
        let ranks = params.ranks(count: tree.count) { tree.partitionRank($0) }
        return tree.summary(ranks: ranks)
    }

    // MARK: - Tracked ranges

    /// Ranges whose summaries ``update(key:old:new:)`` keeps.
    private var ranges: [AggregateRange] = []

    /// Starts keeping the summary of the range of `params` up to date on each write, in O(1) per
    /// changed child instead of O(log *n*) per read; `nil` when `params` has a limit (its window is
    /// a matter of ranks: read it with ``summary(_:)``). The minimum and maximum are kept only
    /// when `minMax`.
    /// - Complexity: O(log *n*)
    package func track(_ params: QueryParams, minMax: Bool) -> AggregateRange? {
        guard params.limit == nil else { return nil }
        let range = AggregateRange(start: params.start, end: params.end, minMax: minMax)
        range.summary = self.recount(range)
        self.ranges.append(range)
        return range
    }

    /// Stops keeping `range`.
    package func untrack(_ range: AggregateRange) {
        self.ranges.removeAll { $0 === range }
    }

    /// The summary of a tracked range now: O(1), or O(log *n*) when its minimum or maximum went
    /// out with a removed child, and once every ``AggregateRange/recountInterval`` changes (so the
    /// rounding of the double-double sum, one error of about 2^-106 per change, never builds up).
    package func summary(of range: AggregateRange) -> AggregateSummary {
        if range.stale || range.changes >= AggregateRange.recountInterval {
            range.summary = self.recount(range)
            range.stale = false
            range.changes = 0
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

/// A range of an ``AggregateIndex`` (start and end bounds, no limit) whose summary the index keeps
/// up to date as children change: a child that leaves the range is taken out of it, one that
/// enters is added, in O(1) (see ``AggregateIndex/track(_:minMax:)``).
package final class AggregateRange {
    /// Changes after which the summary is recounted from the tree.
    static let recountInterval = 1 << 16

    let start: QueryBound?
    let end: QueryBound?
    let startRank: SortRank?
    let endRank: SortRank?
    /// Whether the minimum and maximum are kept (else they are `nil`).
    let minMax: Bool
    /// The summary as last updated (read it with ``AggregateIndex/summary(of:)``).
    package internal(set) var summary = AggregateSummary()
    /// Whether a removed child was the minimum or maximum (recount before reading).
    var stale = false
    /// Changes since the last recount.
    var changes = 0
    /// Whether the summary may have changed since ``takeChanged()``.
    private var changed = false

    init(start: QueryBound?, end: QueryBound?, minMax: Bool) {
        self.start = start
        self.end = end
        self.startRank = start.map { SortRank($0.value) }
        self.endRank = end.map { SortRank($0.value) }
        self.minMax = minMax
    }

    /// Whether the entry lies in the range.
    @inline(__always)
    func contains(_ key: AggregateTreeKey) -> Bool {
        if let start = self.start, let rank = self.startRank {
            let c = key.compare(to: start, rank: rank)
            if start.inclusive ? c < 0 : c <= 0 { return false }
        }
        if let end = self.end, let rank = self.endRank {
            let c = key.compare(to: end, rank: rank)
            return end.inclusive ? c <= 0 : c < 0
        }
        return true
    }

    func remove(_ key: AggregateTreeKey, _ value: AggregateNumber?) {
        guard self.contains(key) else { return }
        if self.summary.remove(value) && self.minMax { self.stale = true }
        self.changes &+= 1
        self.changed = true
    }

    func add(_ key: AggregateTreeKey, _ value: AggregateNumber?) {
        guard self.contains(key) else { return }
        self.summary.addCounts(value)
        if self.minMax, let value { self.summary.mergeMinMax(value, value) }
        self.changes &+= 1
        self.changed = true
    }

    /// Whether a child entered or left the range since the last call (if not, its summary is the
    /// same).
    package func takeChanged() -> Bool {
        defer { self.changed = false }
        return self.changed
    }
}
