extension Node {
    /// Rank of the node's type in value order (see *Ordering and Keys*): null, booleans, numbers,
    /// strings, objects.
    @inlinable
    package var valueTypeRank: Int {
        switch self {
        case .empty: return 0
        case .leaf(let v): return v.typeRank
        case .prioritizedLeaf(let p): return p.value.typeRank
        case .children: return 4
        }
    }

    /// Three-way comparison in value order; all objects compare equal (the key breaks the tie).
    package static func compareValues(_ a: Node, _ b: Node) -> Int {
        if let x = a.leafValue, let y = b.leafValue { return LeafValue.compare(x, y) }
        let ra = a.valueTypeRank
        let rb = b.valueTypeRank
        return ra < rb ? -1 : (ra > rb ? 1 : 0)
    }
}

/// Priority order: no priority first, then numbers ascending, then strings.
package enum PriorityOrder {
    @inlinable
    package static func compare(_ a: LeafValue?, _ b: LeafValue?) -> Int {
        switch (a, b) {
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        case (let x?, let y?): return LeafValue.compare(x, y)
        }
    }
}

/// The order a view sorts its children by (see *Ordering and Keys*). Every order breaks ties by
/// key.
package enum QueryIndex: Sendable, Hashable {
    /// The default order: by priority (which is key order when no child has one).
    case priority
    case key
    case value
    /// By the node at a relative child path (which may be nested, e.g. `metrics/views`).
    case child([ChildKey])

    /// The value this index sorts `child` by (for `.key`, nothing: the key alone orders).
    package func sortValue(of child: Node) -> Node {
        switch self {
        case .priority: return child.priority.map(Node.leaf) ?? .empty
        case .key: return .empty
        case .value: return child
        case .child(let path): return child.node(at: path)
        }
    }

    /// Compares two sort values (as returned by ``sortValue(of:)``), not yet breaking ties.
    @inlinable
    package func compareSortValues(_ a: Node, _ b: Node) -> Int {
        switch self {
        case .key: return 0
        case .priority: return PriorityOrder.compare(a.leafValue, b.leafValue)
        case .value, .child: return Node.compareValues(a, b)
        }
    }

    /// Three-way comparison of two children in this order, ties broken by key.
    package func compare(_ a: (key: ChildKey, node: Node), _ b: (key: ChildKey, node: Node)) -> Int {
        let c = self.compareSortValues(self.sortValue(of: a.node), self.sortValue(of: b.node))
        return c != 0 ? c : ChildKey.compare(a.key, b.key)
    }

    /// Whether a change of a child from `old` to `new` is a move for this index, which raises
    /// `child_moved` even when the position stays (see *Events*).
    package func isMove(from old: Node, to new: Node) -> Bool {
        switch self {
        case .key: return false
        case .priority: return old.priority != new.priority
        case .value: return old != new
        case .child(let path): return Node.compareValues(old.node(at: path), new.node(at: path)) != 0
        }
    }

    /// Whether, for the children of `node`, this order is plain key order.
    package func isKeyOrder(for node: Node) -> Bool {
        switch self {
        case .key: return true
        case .priority:
            if case .children(let c) = node { return c.prioritizedChildren == 0 }
            return true
        case .value, .child: return false
        }
    }
}
