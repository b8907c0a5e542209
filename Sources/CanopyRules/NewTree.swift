import CanopyCore

/// The tree as a write would leave it (`newData`), built only when a rule needs more of it than
/// the written values themselves: a write whose rules look at nothing above the written
/// locations never copies the path from the root.
///
/// Confined to the evaluation of one write (not `Sendable`).
final class NewTree {
    let oldRoot: Node
    let changes: [RulesEngine.Change]
    private var built: Node?

    init(oldRoot: Node, changes: [RulesEngine.Change]) {
        self.oldRoot = oldRoot
        self.changes = changes
    }

    /// The whole new tree (built on first use).
    /// - Complexity: O(*c* · *d* log *n*) the first time, for *c* changes of depth *d*.
    var root: Node {
        if let built = self.built { return built }
        var root = self.oldRoot
        for change in self.changes { root.set(change.value, at: change.path.keys[...]) }
        self.built = root
        return root
    }

    /// The node at `location` in the new tree. For the only change of a write, a location at or
    /// under it is read from the written value, and one above it is the old node there with the
    /// value set in place (a copy of that node's path only): the tree is never built.
    /// - Complexity: O(*d* log *n*).
    func node(at location: ArraySlice<ChildKey>) -> Node {
        if self.built == nil, self.changes.count == 1, self.changes[0].path.keys.last?.isPriorityKey != true {
            let written = self.changes[0].path.keys
            if location.count >= written.count {
                if location.prefix(written.count).elementsEqual(written) {
                    return self.changes[0].value.node(at: location.dropFirst(written.count))
                }
            } else if !location.isEmpty, written.prefix(location.count).elementsEqual(location) {
                var node = self.oldRoot.node(at: location)
                node.set(self.changes[0].value, at: written[location.count...])
                return node
            }
        }
        return self.root.node(at: location)
    }
}
