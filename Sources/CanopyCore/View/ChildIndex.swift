/// The children of one location sorted in one order (by sort value, then key), shared by every
/// view at the location with that order, and kept up to date on each write: O(log *n*) per changed
/// child. Built on first use; dropped when no view (or `keepSynced` pin) uses it any more.
package final class ChildIndex {
    package let index: QueryIndex
    /// The children in order, each with its current node.
    package private(set) var entries: SortedMap<IndexEntry, Node>
    /// Views (and pins) using the index.
    package var users = 0

    /// Builds the index of `node`'s children.
    ///
    /// - Complexity: O(*n* log *n*)
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
