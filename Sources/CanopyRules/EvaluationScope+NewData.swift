import CanopyCore

extension EvaluationScope {
    /// Whether the scope is a write's, with `newData` (a read's has none).
    var hasNewData: Bool { self.changes != nil }

    /// The whole tree as the write leaves it (built on first use).
    /// - Complexity: O(*c* · *d* log *n*) the first time, for *c* changes of depth *d*.
    var newRoot: Node {
        if let built = self.builtNewRoot { return built }
        var root = self.oldRoot
        for change in self.changes ?? [] { root.set(change.value, at: change.path.keys[...]) }
        self.builtNewRoot = root
        return root
    }

    /// The node at `location` in the tree as the write leaves it, built only when a rule needs
    /// more than the written values themselves: for the only change of a write, a location at or
    /// under it is read from the written value, and one above it is the old node there with the
    /// value set in place (a copy of that node's path only). A write whose rules look at nothing
    /// above the written locations never copies the path from the root.
    /// - Complexity: O(*d* log *n*).
    func newNode(at location: ArraySlice<ChildKey>) -> Node {
        if self.builtNewRoot == nil, let changes = self.changes, changes.count == 1, changes[0].path.keys.last?.isPriorityKey != true {
            let written = changes[0].path.keys
            if location.count >= written.count {
                if location.prefix(written.count).elementsEqual(written) {
                    return changes[0].value.node(at: location.dropFirst(written.count))
                }
            } else if !location.isEmpty, written.prefix(location.count).elementsEqual(location) {
                var node = self.oldRoot.node(at: location)
                node.set(changes[0].value, at: written[location.count...])
                return node
            }
        }
        return self.newRoot.node(at: location)
    }
}
