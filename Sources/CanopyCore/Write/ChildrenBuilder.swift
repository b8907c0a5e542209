/// Collects the children of an object node in any order and builds the node: the keys are sorted
/// once, in place, and a node of up to 32 children becomes a single B+tree leaf that keeps the two
/// arrays (no intermediate pairs, no copies).
package struct ChildrenBuilder {
    @usableFromInline var keys: ContiguousArray<ChildKey>
    @usableFromInline var nodes: ContiguousArray<Node>
    @usableFromInline var prioritized = 0

    @inlinable
    package init(capacity: Int) {
        self.keys = ContiguousArray()
        self.nodes = ContiguousArray()
        self.keys.reserveCapacity(capacity)
        self.nodes.reserveCapacity(capacity)
    }

    /// Adds a child; `key` must differ from every key added before, and `node` must not be empty.
    @inlinable
    package mutating func append(_ key: ChildKey, _ node: Node) {
        if node.priority != nil { self.prioritized &+= 1 }
        self.keys.append(key)
        self.nodes.append(node)
    }

    /// The object node (`.empty` without children).
    @inlinable
    package mutating func build() -> Node {
        if self.keys.isEmpty { return .empty }
        if self.keys.count > 1 { Self.sort(&self.keys, &self.nodes) }
        return .children(
            Node.ChildrenNode(map: SortedMap(sortedKeys: self.keys, values: self.nodes), prioritizedChildren: self.prioritized))
    }

    /// The object node for children already in increasing key order (array elements).
    @inlinable
    package func buildSorted() -> Node {
        if self.keys.isEmpty { return .empty }
        let map = SortedMap(sortedKeys: self.keys, values: self.nodes)
        return .children(Node.ChildrenNode(map: map, prioritizedChildren: self.prioritized))
    }

    /// Sorts `keys` (distinct) and `nodes` together by key order.
    @usableFromInline
    static func sort(_ keys: inout ContiguousArray<ChildKey>, _ nodes: inout ContiguousArray<Node>) {
        let n = keys.count
        if n <= 12 {
            // Insertion sort: few comparisons and no allocation for the small objects of a record.
            keys.withUnsafeMutableBufferPointer { k in
                nodes.withUnsafeMutableBufferPointer { v in
                    for i in 1..<n {
                        var j = i
                        while j > 0 && ChildKey.compare(k[j], k[j &- 1]) < 0 {
                            k.swapAt(j, j &- 1)
                            v.swapAt(j, j &- 1)
                            j &-= 1
                        }
                    }
                }
            }
            return
        }
        let order = KeyOrder.sortedPositions(keys)
        var isSorted = true
        for (i, p) in order.enumerated() where i != Int(p) {
            isSorted = false
            break
        }
        if isSorted { return }
        var sortedKeys = ContiguousArray<ChildKey>()
        var sortedNodes = ContiguousArray<Node>()
        sortedKeys.reserveCapacity(n)
        sortedNodes.reserveCapacity(n)
        for p in order {
            sortedKeys.append(keys[Int(p)])
            sortedNodes.append(nodes[Int(p)])
        }
        keys = sortedKeys
        nodes = sortedNodes
    }
}
