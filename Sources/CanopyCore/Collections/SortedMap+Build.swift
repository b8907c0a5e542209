extension SortedMap {
    /// Builds a map from elements already sorted by strictly increasing key.
    ///
    /// - Complexity: O(*n*)
    @inlinable
    package init(sortedKeys keys: ContiguousArray<Key>, values: ContiguousArray<Value>) {
        precondition(keys.count == values.count, "keys and values differ in length")
        if keys.isEmpty {
            self.init()
        } else if keys.count <= Node.leafCapacity {
            self.init(root: Node.leaf(keys: keys, values: values))
        } else {
            self.init(root: Self.buildRoot(keys, values))
        }
    }

    /// The root of a balanced tree holding the (non-empty, sorted) elements, copying each leaf's
    /// share of the arrays in bulk.
    @usableFromInline
    static func buildRoot(_ keys: ContiguousArray<Key>, _ values: ContiguousArray<Value>) -> Node {
        let capacity = Node.leafCapacity
        var level = ContiguousArray<Node>()
        level.reserveCapacity(keys.count / capacity + 1)
        var start = 0
        while start < keys.count {
            let remaining = keys.count - start
            // Split the tail evenly so the last leaf is not underfull.
            let take = bulkNodeWidth(remaining: remaining, capacity: capacity, minWidth: Node.minWidth)
            level.append(Node.leaf(keys: keys[start..<(start + take)], values: values[start..<(start + take)]))
            start += take
        }
        return Self.buildBranches(level)
    }

    /// Builds a map from elements already sorted by strictly increasing key.
    /// - Complexity: O(*n*)
    package init(sortedKeys keys: some Collection<Key>, values: some Collection<Value>) {
        precondition(keys.count == values.count, "keys and values differ in length")
        self.init(root: keys.isEmpty ? nil : Self.buildRoot(keys, values))
    }

    /// The root of a balanced tree holding the (non-empty, sorted) elements.
    @usableFromInline
    static func buildRoot(_ keys: some Collection<Key>, _ values: some Collection<Value>) -> Node {
        let capacity = Node.leafCapacity
        var level = ContiguousArray<Node>()
        level.reserveCapacity(keys.count / capacity + 1)
        var keyIterator = keys.makeIterator()
        var valueIterator = values.makeIterator()
        var remaining = keys.count
        while remaining > 0 {
            // Split the tail evenly so the last leaf is not underfull.
            let take = bulkNodeWidth(remaining: remaining, capacity: capacity, minWidth: Node.minWidth)
            let leaf = Node.make(capacity: take, isLeaf: true)
            for i in 0..<take {
                (leaf.keyBase + i).initialize(to: keyIterator.next()!)
                (leaf.valueBase + i).initialize(to: valueIterator.next()!)
            }
            leaf.head.pointee.width = take
            leaf.head.pointee.count = take
            level.append(leaf)
            remaining -= take
        }
        return Self.buildBranches(level)
    }

    /// Builds the internal levels above a level of nodes, each at most `branchCapacity` wide.
    @usableFromInline
    static func buildBranches(_ nodes: ContiguousArray<Node>) -> Node {
        var level = nodes
        while level.count > 1 {
            var next = ContiguousArray<Node>()
            var i = 0
            while i < level.count {
                let left = level.count - i
                let take = bulkNodeWidth(remaining: left, capacity: Node.branchCapacity, minWidth: Node.minWidth)
                next.append(Node.branch(children: level[i..<(i + take)]))
                i += take
            }
            level = next
        }
        return level[0]
    }
}

extension SortedMap {
    /// Checks the B+tree invariants (ordering, bounds, cached counts, balance). For tests.
    package func checkInvariants() -> Bool {
        guard let root = self.root else { return true }
        var leafDepth: Int? = nil
        func check(_ node: Node, depth: Int, lower: Key?, upper: Key?) -> Bool {
            if node.isLeaf {
                if leafDepth == nil { leafDepth = depth }
                guard leafDepth == depth, node.count == node.width, node.width <= node.slotCapacity else { return false }
            } else {
                guard node.width > 0, node.width <= node.slotCapacity, node.children.count == node.width else { return false }
                guard node.count == node.children.reduce(0, { $0 + $1.count }) else { return false }
            }
            for i in 0..<node.keys.count {
                if i > 0 && !(node.keys[i - 1] < node.keys[i]) { return false }
                if let lower, node.keys[i] < lower { return false }
                if let upper, !(node.keys[i] < upper) { return false }
            }
            if !node.isLeaf {
                for i in 0..<node.children.count {
                    let up = i + 1 < node.keys.count ? node.keys[i + 1] : upper
                    if !check(node.children[i], depth: depth + 1, lower: node.keys[i], upper: up) { return false }
                }
            }
            return true
        }
        return check(root, depth: 0, lower: nil, upper: nil)
    }
}
