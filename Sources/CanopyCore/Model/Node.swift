/// The data at one location of the tree: empty, a leaf, or children (each optionally prioritized).
///
/// `Node` is an immutable-looking value with copy-on-write storage: holding one (in a
/// ``DataSnapshot`` or an event) is O(1), and later writes never change it. A node that is not
/// shared is updated in place. Invariants (there are no empty objects): a children node has at
/// least one child and no child is empty; empty nodes have no priority.
package enum Node: Sendable {
    case empty
    case leaf(LeafValue)
    case children(ChildrenNode)
    case prioritizedLeaf(PrioritizedLeaf)

    /// An object node: children in key order plus, rarely, a priority and a count of children
    /// that have priorities (so the default order can use key order when there are none).
    package struct ChildrenNode: Sendable {
        package var map: SortedMap<ChildKey, Node>
        package var extras: Extras?

        package init(map: SortedMap<ChildKey, Node>, priority: LeafValue? = nil, prioritizedChildren: Int) {
            self.map = map
            self.extras = Extras.make(priority: priority, prioritizedChildren: prioritizedChildren)
        }

        package var priority: LeafValue? { self.extras?.priority }
        package var prioritizedChildren: Int { self.extras?.prioritizedChildren ?? 0 }

        package mutating func setPriority(_ priority: LeafValue?) {
            self.extras = Extras.make(priority: priority, prioritizedChildren: self.prioritizedChildren)
        }

        package mutating func adjustPrioritizedChildren(by delta: Int) {
            guard delta != 0 else { return }
            self.extras = Extras.make(priority: self.priority, prioritizedChildren: self.prioritizedChildren + delta)
        }
    }

    /// The rarely used parts of a children node, boxed to keep `Node` small.
    package final class Extras: Sendable {
        package let priority: LeafValue?
        package let prioritizedChildren: Int

        init(priority: LeafValue?, prioritizedChildren: Int) {
            self.priority = priority
            self.prioritizedChildren = prioritizedChildren
        }

        static func make(priority: LeafValue?, prioritizedChildren: Int) -> Extras? {
            priority == nil && prioritizedChildren == 0 ? nil : Extras(priority: priority, prioritizedChildren: prioritizedChildren)
        }
    }

    /// A leaf with a priority (rare, so boxed to keep `Node` small).
    package final class PrioritizedLeaf: Sendable {
        package let value: LeafValue
        package let priority: LeafValue
        package init(value: LeafValue, priority: LeafValue) {
            self.value = value
            self.priority = priority
        }
    }

}

extension SortedMap: @unchecked Sendable where Key: Sendable, Value: Sendable {}  // copy-on-write: shared nodes are never mutated

extension Node {
    @inlinable package var isEmpty: Bool { if case .empty = self { return true } else { return false } }

    /// Whether the node has children.
    @inlinable package var hasChildren: Bool { if case .children = self { return true } else { return false } }

    /// The leaf value of a leaf node.
    package var leafValue: LeafValue? {
        switch self {
        case .leaf(let v): return v
        case .prioritizedLeaf(let p): return p.value
        default: return nil
        }
    }

    /// The node's priority, `nil` when it has none.
    package var priority: LeafValue? {
        switch self {
        case .empty, .leaf: return nil
        case .prioritizedLeaf(let p): return p.priority
        case .children(let c): return c.priority
        }
    }

    /// The number of direct children.
    ///
    /// - Complexity: O(1)
    package var childCount: Int { if case .children(let c) = self { return c.map.count } else { return 0 } }

    /// The children map (empty for leaves and empty nodes).
    package var childMap: SortedMap<ChildKey, Node> {
        if case .children(let c) = self { return c.map }
        return SortedMap()
    }

    /// The direct child at `key`, `.empty` when there is none.
    ///
    /// - Complexity: O(log *n*)
    package func child(_ key: ChildKey) -> Node {
        if case .children(let c) = self { return c.map[key] ?? .empty }
        return .empty
    }

    /// The node at a relative path.
    ///
    /// - Complexity: O(*d* log *n*)
    package func node(at path: some Sequence<ChildKey>) -> Node {
        var node = self
        for key in path {
            guard case .children(let c) = node, let next = c.map[key] else { return .empty }
            node = next
        }
        return node
    }

    /// ``node(at:)`` for a path slice, without generic dispatch from other modules.
    ///
    /// - Complexity: O(*d* log *n*)
    package func node(at path: ArraySlice<ChildKey>) -> Node {
        // The common one-key path (a child field) in one lookup, without the loop's copies.
        if path.count == 1 { return self.child(path[path.startIndex]) }
        var node = self
        for key in path {
            guard case .children(let c) = node, let next = c.map[key] else { return .empty }
            node = next
        }
        return node
    }

    /// ``node(at:)`` for a path array, without generic dispatch from other modules.
    ///
    /// - Complexity: O(*d* log *n*)
    package func node(at path: [ChildKey]) -> Node { self.node(at: path[...]) }

    /// Calls `body` with each child in key order, until it returns `false`. Compiled here, for
    /// this map type, so callers in other modules iterate without generic dispatch.
    ///
    /// - Complexity: O(*n*) for *n* children.
    package func forEachChild(while body: (ChildKey, Node) throws -> Bool) rethrows {
        guard case .children(let c) = self else { return }
        try c.map.forEachElement(while: body)
    }

    /// This node with its priority replaced (a no-op on an empty node).
    package func withPriority(_ priority: LeafValue?) -> Node {
        switch self {
        case .empty: return .empty
        case .leaf(let v):
            if let priority { return .prioritizedLeaf(PrioritizedLeaf(value: v, priority: priority)) }
            return self
        case .prioritizedLeaf(let p):
            if let priority { return .prioritizedLeaf(PrioritizedLeaf(value: p.value, priority: priority)) }
            return .leaf(p.value)
        case .children(var c):
            c.setPriority(priority)
            return .children(c)
        }
    }

    /// This node without its priority.
    package var withoutPriority: Node {
        switch self {
        case .prioritizedLeaf(let p): return .leaf(p.value)
        case .children(let c) where c.priority != nil: return self.withPriority(nil)
        default: return self
        }
    }

    /// Builds a node from children, none of them empty (no children gives `.empty`).
    package static func from(children: SortedMap<ChildKey, Node>, priority: LeafValue? = nil) -> Node {
        if children.isEmpty { return .empty }
        var prioritized = 0
        for (_, child) in children where child.priority != nil { prioritized += 1 }
        return .children(ChildrenNode(map: children, priority: priority, prioritizedChildren: prioritized))
    }
}
