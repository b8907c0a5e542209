extension Node {
    /// Replaces (or, with `.empty`, removes) the direct child `key`, keeping the invariants:
    /// writing under a leaf turns it into a children node that keeps the leaf's priority, and a node
    /// whose last child goes away becomes empty (losing its priority).
    package mutating func setChild(_ key: ChildKey, to child: Node) {
        switch self {
        case .children(var c):
            self = .empty  // release our reference so `c` is uniquely referenced
            let old = child.isEmpty ? c.map.removeValue(forKey: key) : c.map.updateValue(child, forKey: key)
            c.adjustPrioritizedChildren(by: (child.priority != nil ? 1 : 0) - (old?.priority != nil ? 1 : 0))
            self = c.map.isEmpty ? .empty : .children(c)
        case .empty, .leaf, .prioritizedLeaf:
            guard !child.isEmpty else { return }
            var map = SortedMap<ChildKey, Node>()
            map.updateValue(child, forKey: key)
            self = .children(ChildrenNode(map: map, priority: self.priority, prioritizedChildren: child.priority != nil ? 1 : 0))
        }
    }

    /// Replaces the node at a relative path (`.empty` removes it), creating intermediate children and
    /// removing emptied ancestors. A path ending in `.priority` sets the priority of its parent.
    /// - Complexity: O(*d* log *n*) when not shared; shared nodes on the path are copied.
    package mutating func set(_ newValue: Node, at path: ArraySlice<ChildKey>) {
        guard let first = path.first else {
            self = newValue
            return
        }
        if path.count == 1 && first.isPriorityKey {
            self = self.withPriority(newValue.leafValue)
            return
        }
        let rest = path.dropFirst()
        if rest.isEmpty {
            // A direct child: one search to insert, replace or remove.
            self.setChild(first, to: newValue)
            return
        }
        self.modifyChild(first) { child in child.set(newValue, at: rest) }
    }

    /// Changes the node at a relative path in place with `body` (which sees `.empty` where there is
    /// no data), creating intermediate children and removing ancestors left empty, as ``set(_:at:)``
    /// does: several writes below one location then share one descent to it. `path` holds no
    /// `.priority` key.
    /// - Complexity: O(*d* log *n*) plus `body` when not shared; shared nodes on the path are copied.
    package mutating func modify(at path: ArraySlice<ChildKey>, _ body: (inout Node) -> Void) {
        guard let first = path.first else {
            body(&self)
            return
        }
        let rest = path.dropFirst()
        self.modifyChild(first) { child in child.modify(at: rest, body) }
    }

    /// Changes the direct child `key` in place with `body` (`.empty` when there is none), keeping
    /// the invariants of ``setChild(_:to:)``.
    private mutating func modifyChild(_ key: ChildKey, _ body: (inout Node) -> Void) {
        if case .children(var c) = self {
            self = .empty  // release our reference so `c` is uniquely referenced
            let outcome: (emptied: Bool, delta: Int)? = c.map.modifyValue(forKey: key) { child in
                let had = child.priority != nil
                body(&child)
                return (child.isEmpty, (child.priority != nil ? 1 : 0) - (had ? 1 : 0))
            }
            if let outcome {
                if outcome.emptied { c.map.removeValue(forKey: key) }
                c.adjustPrioritizedChildren(by: outcome.delta)
                self = c.map.isEmpty ? .empty : .children(c)
                return
            }
            self = .children(c)
        }
        // The child does not exist yet.
        var child = Node.empty
        body(&child)
        self.setChild(key, to: child)
    }

    /// Returns this node with the node at `path` replaced.
    package func setting(_ newValue: Node, at path: ArraySlice<ChildKey>) -> Node {
        var copy = self
        copy.set(newValue, at: path)
        return copy
    }
}
