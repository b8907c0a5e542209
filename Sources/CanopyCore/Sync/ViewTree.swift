/// The views of a database arranged by location, so a write visits only the views on its path and
/// below it (never views elsewhere).
final class ViewTreeNode {
    // Unchecked exclusivity: the tree belongs to its engine's one thread, and every change to a
    // property is a single assignment, append or removal that calls nothing which could access it
    // again, so the dynamic checks (five on every write's `isEmpty` alone) cannot fail.
    @exclusivity(unchecked) var children: [ChildKey: ViewTreeNode] = [:]
    /// Views at this location, in creation order.
    @exclusivity(unchecked) var views: [QueryView] = []
    /// Indexes of this location's children, by order; shared by the views here.
    @exclusivity(unchecked) var indexes: [QueryIndex: ChildIndex] = [:]
    /// Aggregate indexes of this location's children, by order and field; shared by its live
    /// aggregates.
    @exclusivity(unchecked) var aggregates: [AggregateIndex.Key: AggregateIndex] = [:]
    /// Live aggregates at this location.
    @exclusivity(unchecked) var aggregateListeners: [AggregateListener] = []

    var isEmpty: Bool {
        self.children.isEmpty && self.views.isEmpty && self.indexes.isEmpty && self.aggregates.isEmpty && self.aggregateListeners.isEmpty
    }

    /// Whether a write below this location must update indexes here.
    var hasIndexes: Bool { !self.indexes.isEmpty || !self.aggregates.isEmpty }

    /// The child at `key`: with a single child (the usual case on a write's path), one key
    /// comparison instead of hashing `key`.
    @inline(__always)
    func child(_ key: ChildKey) -> ViewTreeNode? {
        if self.children.count == 1, let only = self.children.first { return only.key == key ? only.value : nil }
        return self.children[key]
    }

    /// The node at `path`, created on the way when `create` is set.
    func descendant(_ path: some Sequence<ChildKey>, create: Bool) -> ViewTreeNode? {
        var node = self
        for key in path {
            if let next = node.child(key) {
                node = next
            } else if create {
                let next = ViewTreeNode()
                node.children[key] = next
                node = next
            } else {
                return nil
            }
        }
        return node
    }

    /// Removes empty nodes along `path` (deepest first).
    func prune(_ path: [ChildKey]) {
        guard let first = path.first, let child = self.children[first] else { return }
        child.prune(Array(path.dropFirst()))
        if child.isEmpty { self.children[first] = nil }
    }

    /// Children in plain string order of their keys (the order events below a write go out in).
    var childrenInStringOrder: [(key: ChildKey, node: ViewTreeNode)] {
        self.children.map { ($0.key, $0.value) }.sorted { ChildKey.compareUTF16($0.key.string, $1.key.string) < 0 }
    }
}
