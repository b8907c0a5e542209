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

    /// The node at `location` in the new tree. A location at or under the only change is read
    /// from the written value, without building the tree.
    /// - Complexity: O(*d* log *n*).
    func node(at location: ArraySlice<ChildKey>) -> Node {
        if self.built == nil, self.changes.count == 1 {
            let written = self.changes[0].path.keys
            if location.count >= written.count, written.last?.isPriorityKey != true,
                location.prefix(written.count).elementsEqual(written)
            {
                return self.changes[0].value.node(at: location.dropFirst(written.count))
            }
        }
        return self.root.node(at: location)
    }
}
