extension SortedMap {
    /// Inserts or replaces the value for `key`; returns the previous value.
    /// - Complexity: O(log *n*), plus copying the O(log *n*) path nodes when the map is shared.
    @inlinable
    @discardableResult
    package mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        guard self.root != nil else {
            self.root = Node.leaf(keys: CollectionOfOne(key), values: CollectionOfOne(value))
            return nil
        }
        if !isKnownUniquelyReferenced(&self.root!) { self.root = self.root!.copy() }
        let root = self.root!
        // A key past the last one (push IDs, increasing keys) is found with one comparison (in a
        // map of one leaf, a search costs about as much).
        let (old, node, split) = Node.insert(into: root, key, value, appending: !root.isLeaf && root.lastKey < key)
        if let split {
            self.root = Node.branch(children: [node, split])
        } else if node !== root {
            self.root = node
        }
        return old
    }

    /// Removes `key`; returns its value if it was present.
    ///
    /// - Complexity: O(log *n*)
    @inlinable
    @discardableResult
    package mutating func removeValue(forKey key: Key) -> Value? {
        guard self.root != nil else { return nil }
        if !isKnownUniquelyReferenced(&self.root!) { self.root = self.root!.copy() }
        let root = self.root!
        let old = Node.remove(from: root, key)
        if root.count == 0 {
            self.root = nil
        } else if !root.isLeaf && root.width == 1 {
            self.root = root.children[0]
        }
        return old
    }

    /// Calls `body` with the value for `key` in place, without copying it when it is not shared;
    /// returns `nil` (without calling `body`) when `key` is absent.
    @inlinable
    package mutating func modifyValue<R>(forKey key: Key, _ body: (inout Value) throws -> R) rethrows -> R? {
        guard self.root != nil else { return nil }
        if !isKnownUniquelyReferenced(&self.root!) { self.root = self.root!.copy() }
        var node = self.root!
        while !node.isLeaf {
            let c = node.childIndex(for: key)
            if !isKnownUniquelyReferenced(&node.children[c]) { node.children[c] = node.children[c].copy() }
            node = node.children[c]
        }
        let i = node.lowerBound(key)
        guard i < node.width && node.keys[i] == key else { return nil }
        return try body(&node.values[i])
    }
}

extension SortedMapNode {
    @usableFromInline static var minWidth: Int { 8 }

    /// Inserts into this (uniquely referenced) subtree. Returns the replaced value, the node
    /// that now holds the subtree's left part (this one, or a larger leaf it moved into) and, when
    /// it overflowed, the new right sibling split off from it.
    @usableFromInline
    static func insert(into node: SortedMapNode, _ key: Key, _ value: Value, appending: Bool) -> (Value?, SortedMapNode, SortedMapNode?) {
        // `appending`: the key is past the last key of the subtree, so it goes at its right edge.
        let width = node.width
        if node.isLeaf {
            let i = appending ? width : node.lowerBound(key)
            if i < width && node.keys[i] == key {
                let old = (node.valueBase + i).move()
                (node.valueBase + i).initialize(to: value)
                return (old, node, nil)
            }
            if i == width && width >= leafCapacity {
                // Appending to a full leaf starts its right sibling, sized for the appends to come.
                let right = SortedMapNode.make(capacity: leafCapacity &+ 1, isLeaf: true)
                right.insertElement(key, value, at: 0)
                return (nil, node, right)
            }
            // A full leaf moves into a larger one (doubling, up to one past a leaf's capacity).
            let target = width < node.slotCapacity ? node : node.moved(capacity: Swift.min(Swift.max(width &* 2, 4), leafCapacity &+ 1))
            target.insertElement(key, value, at: i)
            guard target.width > leafCapacity else { return (nil, target, nil) }
            let cut = target.width / 2
            let right = SortedMapNode.make(capacity: leafCapacity &+ 1, isLeaf: true)
            right.takeSuffix(of: target, from: cut)
            return (nil, target, right)
        }
        let c = appending ? width &- 1 : node.childIndex(for: key)
        if !isKnownUniquelyReferenced(&node.children[c]) { node.children[c] = node.children[c].copy() }
        let child = node.children[c]
        if c == 0 && !appending && key < node.keys[0] { node.keys[0] = key }
        let (old, left, split) = insert(into: child, key, value, appending: appending)
        if left !== child { node.children[c] = left }
        if old == nil { node.count &+= 1 }
        guard let split else { return (old, node, nil) }
        node.insertChild(split, at: c &+ 1)
        guard node.width > branchCapacity else { return (old, node, nil) }
        let cut = c &+ 1 == node.width &- 1 ? node.width &- 1 : node.width / 2
        let right = SortedMapNode.make(capacity: branchCapacity &+ 1, isLeaf: false)
        right.takeSuffix(of: node, from: cut)
        return (old, node, right)
    }

    /// Removes `key` from this (uniquely referenced) subtree, rebalancing underfull children.
    @usableFromInline
    static func remove(from node: SortedMapNode, _ key: Key) -> Value? {
        if node.isLeaf {
            let i = node.lowerBound(key)
            guard i < node.width && node.keys[i] == key else { return nil }
            return node.removeElement(at: i)
        }
        let c = node.childIndex(for: key)
        if !isKnownUniquelyReferenced(&node.children[c]) { node.children[c] = node.children[c].copy() }
        guard let old = remove(from: node.children[c], key) else { return nil }
        node.count &-= 1
        if node.children[c].width < minWidth { node.rebalance(child: c) }
        return old
    }

    /// Merges child `c` with a neighbour, or evens the two out when together they overflow.
    @usableFromInline
    func rebalance(child c: Int) {
        guard self.width > 1 else { return }
        let l = c > 0 ? c &- 1 : c
        let r = l &+ 1
        let left = self.children[l]
        let right = self.children[r]
        let total = left.width &+ right.width
        let capacity = left.isLeaf ? SortedMapNode.leafCapacity : SortedMapNode.branchCapacity
        // Both into one node (shared elements are copied, not moved: either child may be shared).
        // (A branch keeps room for the child an insertion adds before it splits.)
        let merged = SortedMapNode.make(capacity: left.isLeaf ? Swift.max(total, 1) : Swift.max(total, capacity &+ 1), isLeaf: left.isLeaf)
        merged.appendCopies(of: left)
        merged.appendCopies(of: right)
        if total <= capacity {
            self.children[l] = merged
            self.removeChild(at: r)
            if merged.width == 0 { self.removeChild(at: l) }
            return
        }
        let cut = total / 2
        let newRight = SortedMapNode.make(capacity: capacity &+ 1, isLeaf: left.isLeaf)
        newRight.takeSuffix(of: merged, from: cut)
        self.children[l] = merged
        self.children[r] = newRight
        self.keys[r] = newRight.keys[0]
    }

    // MARK: Changing a node's own elements (uniquely referenced nodes only)

    /// Leaf: inserts an element at `i` (there must be room).
    @inlinable
    func insertElement(_ key: Key, _ value: Value, at i: Int) {
        let width = self.head.pointee.width
        precondition(width < self.head.pointee.capacity, "SortedMapNode: no room to insert")
        (self.keyBase + (i &+ 1)).moveInitialize(from: self.keyBase + i, count: width &- i)
        (self.valueBase + (i &+ 1)).moveInitialize(from: self.valueBase + i, count: width &- i)
        (self.keyBase + i).initialize(to: key)
        (self.valueBase + i).initialize(to: value)
        self.head.pointee.width = width &+ 1
        self.head.pointee.count &+= 1
    }

    /// Leaf: removes the element at `i` and returns its value.
    @inlinable
    func removeElement(at i: Int) -> Value {
        let width = self.head.pointee.width
        (self.keyBase + i).deinitialize(count: 1)
        let value = (self.valueBase + i).move()
        (self.keyBase + i).moveInitialize(from: self.keyBase + (i &+ 1), count: width &- i &- 1)
        (self.valueBase + i).moveInitialize(from: self.valueBase + (i &+ 1), count: width &- i &- 1)
        self.head.pointee.width = width &- 1
        self.head.pointee.count &-= 1
        return value
    }

    /// Internal: inserts `child` at `i`, keyed by its lower bound (there must be room); the
    /// subtree count does not change (the caller has counted the child's elements already).
    @usableFromInline
    func insertChild(_ child: SortedMapNode, at i: Int) {
        let width = self.head.pointee.width
        precondition(width < self.head.pointee.capacity, "SortedMapNode: no room for a child")
        (self.keyBase + (i &+ 1)).moveInitialize(from: self.keyBase + i, count: width &- i)
        (self.childBase + (i &+ 1)).moveInitialize(from: self.childBase + i, count: width &- i)
        (self.keyBase + i).initialize(to: child.keyBase.pointee)
        (self.childBase + i).initialize(to: child)
        self.head.pointee.width = width &+ 1
    }

    /// Internal: removes the child at `i`, whose elements the caller has already accounted for.
    @usableFromInline
    func removeChild(at i: Int) {
        let width = self.head.pointee.width
        (self.keyBase + i).deinitialize(count: 1)
        (self.childBase + i).deinitialize(count: 1)
        (self.keyBase + i).moveInitialize(from: self.keyBase + (i &+ 1), count: width &- i &- 1)
        (self.childBase + i).moveInitialize(from: self.childBase + (i &+ 1), count: width &- i &- 1)
        self.head.pointee.width = width &- 1
    }

    /// Moves the elements from `cut` on out of `other` into this empty node of the same kind.
    @usableFromInline
    func takeSuffix(of other: SortedMapNode, from cut: Int) {
        let n = other.width &- cut
        precondition(self.width == 0 && n <= self.slotCapacity, "SortedMapNode: no room for the suffix")
        self.keyBase.moveInitialize(from: other.keyBase + cut, count: n)
        var moved = 0
        if other.isLeaf {
            self.valueBase.moveInitialize(from: other.valueBase + cut, count: n)
            moved = n
        } else {
            self.childBase.moveInitialize(from: other.childBase + cut, count: n)
            for j in 0..<n { moved &+= self.childBase[j].count }
        }
        self.head.pointee.width = n
        self.head.pointee.count = moved
        other.head.pointee.width = cut
        other.head.pointee.count &-= moved
    }

    /// Appends copies of `other`'s elements (or children) to this node of the same kind.
    @usableFromInline
    func appendCopies(of other: SortedMapNode) {
        let width = self.width
        let n = other.width
        precondition(width &+ n <= self.slotCapacity, "SortedMapNode: no room to append")
        (self.keyBase + width).initialize(from: other.keyBase, count: n)
        if other.isLeaf {
            (self.valueBase + width).initialize(from: other.valueBase, count: n)
        } else {
            (self.childBase + width).initialize(from: other.childBase, count: n)
        }
        self.head.pointee.width = width &+ n
        self.head.pointee.count &+= other.count
    }

    /// Moves this (uniquely referenced) node's elements into a new node with room for
    /// `capacity`, leaving this one empty.
    @usableFromInline
    func moved(capacity: Int) -> SortedMapNode {
        let node = SortedMapNode.make(capacity: capacity, isLeaf: self.isLeaf)
        node.takeSuffix(of: self, from: 0)
        return node
    }
}
