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

    /// Records that child `key` went from `old` to `new` (either may be empty).
    /// - Complexity: O(log *n*)
    package func update(key: ChildKey, old: Node, new: Node) {
        let oldEntry = old.isEmpty ? nil : self.entry(key, old)
        guard !new.isEmpty else {
            if let oldEntry { self.tree.remove(oldEntry) }
            return
        }
        let newEntry = self.entry(key, new)
        if let oldEntry, IndexEntry.compare(oldEntry, newEntry) != 0 { self.tree.remove(oldEntry) }
        self.tree.set(newEntry, self.value(of: new))
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
}
