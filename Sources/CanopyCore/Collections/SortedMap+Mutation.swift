extension SortedMap {
    /// Inserts or replaces the value for `key`; returns the previous value.
    /// - Complexity: O(log *n*), plus copying the O(log *n*) path nodes when the map is shared.
    @inlinable
    @discardableResult
    package mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        guard self.root != nil else {
            self.root = Node(keys: [key], values: [value])
            return nil
        }
        if !isKnownUniquelyReferenced(&self.root!) { self.root = Node(copying: self.root!) }
        let root = self.root!
        // A key past the last one (push IDs, increasing keys) is found with one comparison (in a
        // map of one leaf, a search costs about as much).
        let (old, split) = Node.insert(into: root, key, value, appending: !root.isLeaf && root.lastKey < key)
        if let split { self.root = Node(children: [root, split]) }
        return old
    }

    /// Removes `key`; returns its value if it was present.
    ///
    /// - Complexity: O(log *n*)
    @inlinable
    @discardableResult
    package mutating func removeValue(forKey key: Key) -> Value? {
        guard self.root != nil else { return nil }
        if !isKnownUniquelyReferenced(&self.root!) { self.root = Node(copying: self.root!) }
        let root = self.root!
        let old = Node.remove(from: root, key)
        if root.count == 0 {
            self.root = nil
        } else if !root.isLeaf && root.children.count == 1 {
            self.root = root.children[0]
        }
        return old
    }

    /// Calls `body` with the value for `key` in place, without copying it when it is not shared;
    /// returns `nil` (without calling `body`) when `key` is absent.
    @inlinable
    package mutating func modifyValue<R>(forKey key: Key, _ body: (inout Value) throws -> R) rethrows -> R? {
        guard self.root != nil else { return nil }
        if !isKnownUniquelyReferenced(&self.root!) { self.root = Node(copying: self.root!) }
        var node = self.root!
        while !node.isLeaf {
            let c = node.childIndex(for: key)
            if !isKnownUniquelyReferenced(&node.children[c]) { node.children[c] = Node(copying: node.children[c]) }
            node = node.children[c]
        }
        let i = node.lowerBound(key)
        guard i < node.width && node.keys[i] == key else { return nil }
        return try body(&node.values[i])
    }
}

extension SortedMapNode {
    @usableFromInline static var minWidth: Int { 8 }

    /// Inserts into this (uniquely referenced) subtree; returns the replaced value and, when this
    /// node overflowed, the new right sibling split off from it.
    @usableFromInline
    static func insert(into node: SortedMapNode, _ key: Key, _ value: Value, appending: Bool) -> (Value?, SortedMapNode?) {
        // `appending`: the key is past the last key of the subtree, so it goes at its right edge.
        let width = node.width
        if node.isLeaf {
            let i = appending ? width : node.lowerBound(key)
            if i < width && node.keys[i] == key {
                let old = node.values[i]
                node.values[i] = value
                return (old, nil)
            }
            if i == width && width >= leafCapacity {
                // Appending to a full leaf starts its right sibling, sized for the appends to come.
                var keys = ContiguousArray<Key>()
                var values = ContiguousArray<Value>()
                keys.reserveCapacity(leafCapacity)
                values.reserveCapacity(leafCapacity)
                keys.append(key)
                values.append(value)
                return (nil, SortedMapNode(keys: keys, values: values))
            }
            if i == width {
                node.keys.append(key)
                node.values.append(value)
            } else {
                node.keys.insert(key, at: i)
                node.values.insert(value, at: i)
            }
            node.count &+= 1
            guard node.width > leafCapacity else { return (nil, nil) }
            let cut = node.width / 2
            let right = SortedMapNode(keys: ContiguousArray(node.keys[cut...]), values: ContiguousArray(node.values[cut...]))
            // Fresh arrays: keep the left half at its exact size rather than the grown capacity.
            node.keys = ContiguousArray(node.keys[..<cut])
            node.values = ContiguousArray(node.values[..<cut])
            node.count = node.keys.count
            return (nil, right)
        }
        let c = appending ? width &- 1 : node.childIndex(for: key)
        if !isKnownUniquelyReferenced(&node.children[c]) { node.children[c] = SortedMapNode(copying: node.children[c]) }
        let child = node.children[c]
        if c == 0 && !appending && key < node.keys[0] { node.keys[0] = key }
        let (old, split) = insert(into: child, key, value, appending: appending)
        if old == nil { node.count &+= 1 }
        guard let split else { return (old, nil) }
        if c &+ 1 == width {
            node.children.append(split)
            node.keys.append(split.keys[0])
        } else {
            node.children.insert(split, at: c &+ 1)
            node.keys.insert(split.keys[0], at: c &+ 1)
        }
        guard node.width > branchCapacity else { return (old, nil) }
        let cut = c &+ 1 == node.width &- 1 ? node.width &- 1 : node.width / 2
        let right = SortedMapNode(children: ContiguousArray(node.children[cut...]))
        node.children.removeSubrange(cut...)
        node.keys.removeSubrange(cut...)
        node.count &-= right.count
        return (old, right)
    }

    /// Removes `key` from this (uniquely referenced) subtree, rebalancing underfull children.
    @usableFromInline
    static func remove(from node: SortedMapNode, _ key: Key) -> Value? {
        if node.isLeaf {
            let i = node.lowerBound(key)
            guard i < node.width && node.keys[i] == key else { return nil }
            node.keys.remove(at: i)
            node.count -= 1
            return node.values.remove(at: i)
        }
        let c = node.childIndex(for: key)
        if !isKnownUniquelyReferenced(&node.children[c]) { node.children[c] = SortedMapNode(copying: node.children[c]) }
        guard let old = remove(from: node.children[c], key) else { return nil }
        node.count -= 1
        if node.children[c].width < minWidth { node.rebalance(child: c) }
        return old
    }

    /// Merges child `c` with a neighbour, or evens the two out when together they overflow.
    @usableFromInline
    func rebalance(child c: Int) {
        guard self.children.count > 1 else { return }
        let l = c > 0 ? c - 1 : c
        let r = l + 1
        if !isKnownUniquelyReferenced(&self.children[l]) { self.children[l] = SortedMapNode(copying: self.children[l]) }
        if !isKnownUniquelyReferenced(&self.children[r]) { self.children[r] = SortedMapNode(copying: self.children[r]) }
        let left = self.children[l]
        let right = self.children[r]
        if left.isLeaf {
            left.keys.append(contentsOf: right.keys)
            left.values.append(contentsOf: right.values)
        } else {
            left.children.append(contentsOf: right.children)
            left.keys.append(contentsOf: right.keys)
        }
        left.count += right.count
        let capacity = left.isLeaf ? SortedMapNode.leafCapacity : SortedMapNode.branchCapacity
        if left.width <= capacity {
            self.children.remove(at: r)
            self.keys.remove(at: r)
            if left.width == 0 {
                self.children.remove(at: l)
                self.keys.remove(at: l)
            }
            return
        }
        let cut = left.width / 2
        let newRight: SortedMapNode
        if left.isLeaf {
            newRight = SortedMapNode(keys: ContiguousArray(left.keys[cut...]), values: ContiguousArray(left.values[cut...]))
            left.values.removeSubrange(cut...)
        } else {
            newRight = SortedMapNode(children: ContiguousArray(left.children[cut...]))
            left.children.removeSubrange(cut...)
        }
        left.keys.removeSubrange(cut...)
        left.count -= newRight.count
        self.children[r] = newRight
        self.keys[r] = newRight.keys[0]
    }
}
