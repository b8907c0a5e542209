/// The differences between the children of two versions of a node, by key (spec §6.2).
package struct ChildChanges {
    package var removed: [(key: ChildKey, node: Node)] = []
    package var added: [(key: ChildKey, node: Node)] = []
    package var changed: [(key: ChildKey, old: Node, new: Node)] = []

    package var isEmpty: Bool { self.removed.isEmpty && self.added.isEmpty && self.changed.isEmpty }

    /// Compares the children of `old` and `new`. When `candidates` is given, only those keys can
    /// have changed (a write below the location), so only they are looked at: O(k log *n*).
    /// Otherwise the two children maps are merged in key order: O(*n* + *m*).
    /// Every list comes out in key order.
    package init(old: Node, new: Node, candidates: [ChildKey]?) {
        let oldMap = old.childMap
        let newMap = new.childMap
        if oldMap.isIdentical(to: newMap) { return }
        if let candidates {
            for key in candidates {
                self.classify(key, oldMap[key], newMap[key])
            }
            return
        }
        var oi = oldMap.makeIterator()
        var ni = newMap.makeIterator()
        var o = oi.next()
        var n = ni.next()
        while o != nil || n != nil {
            if let oe = o, let ne = n {
                let c = ChildKey.compare(oe.key, ne.key)
                if c == 0 {
                    if oe.value != ne.value { self.changed.append((oe.key, oe.value, ne.value)) }
                    o = oi.next()
                    n = ni.next()
                } else if c < 0 {
                    self.removed.append((oe.key, oe.value))
                    o = oi.next()
                } else {
                    self.added.append((ne.key, ne.value))
                    n = ni.next()
                }
            } else if let oe = o {
                self.removed.append((oe.key, oe.value))
                o = oi.next()
            } else if let ne = n {
                self.added.append((ne.key, ne.value))
                n = ni.next()
            }
        }
    }

    private mutating func classify(_ key: ChildKey, _ old: Node?, _ new: Node?) {
        switch (old, new) {
        case let (o?, n?): if o != n { self.changed.append((key, o, n)) }
        case let (o?, nil): self.removed.append((key, o))
        case let (nil, n?): self.added.append((key, n))
        case (nil, nil): break
        }
    }
}

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
        var low = 0
        var high = list.count
        while low < high {
            let mid = (low + high) / 2
            if self.index.compare(list[mid], probe) < 0 { low = mid + 1 } else { high = mid }
        }
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
