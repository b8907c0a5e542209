/// The children of a node in a view's order, for sorting events and finding previous keys.
///
/// Key order (the default order when no child has a priority) is answered from the node's own
/// sorted map in O(log *n*); any other order sorts the children once, on first use.
package struct OrderedChildren {
    package let node: Node
    package let index: QueryIndex
    private var sorted: [(key: ChildKey, node: Node)]? = nil

    package init(node: Node, index: QueryIndex) {
        self.node = node
        self.index = index
    }

    package var isKeyOrder: Bool { self.index.isKeyOrder(for: self.node) }

    /// The children in order.
    package mutating func all() -> [(key: ChildKey, node: Node)] {
        if self.isKeyOrder { return self.node.childMap.map { ($0.key, $0.value) } }
        return self.sortedChildren()
    }

    /// The key of the child just before `key` in this order, `nil` when it is first.
    package mutating func previousKey(before key: ChildKey) -> String? {
        if self.isKeyOrder { return self.node.childMap.predecessor(of: key)?.key.string }
        let list = self.sortedChildren()
        let probe = (key: key, node: self.node.child(key))
        let index = self.index
        let low = leadingCount(list.count) { index.compare(list[$0], probe) < 0 }
        return low == 0 ? nil : list[low - 1].key.string
    }

    private mutating func sortedChildren() -> [(key: ChildKey, node: Node)] {
        if let sorted = self.sorted { return sorted }
        let index = self.index
        let list = self.node.childMap.map { (key: $0.key, node: $0.value) }.sorted { index.compare($0, $1) < 0 }
        self.sorted = list
        return list
    }
}
