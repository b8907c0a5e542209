extension SortedMap {
    /// The value for `key`, if present.
    ///
    /// - Complexity: O(log *n*)
    @inlinable
    package subscript(key: Key) -> Value? {
        guard var node = self.root else { return nil }
        while !node.isLeaf { node = node.children[node.childIndex(for: key)] }
        let i = node.lowerBound(key)
        if i < node.width && node.keys[i] == key { return node.values[i] }
        return nil
    }

    /// Whether `key` is present.
    ///
    /// - Complexity: O(log *n*)
    @inlinable
    package func contains(_ key: Key) -> Bool { self[key] != nil }

    /// The number of keys less than `key`.
    ///
    /// - Complexity: O(log *n* · B)
    @inlinable
    package func lowerBoundRank(_ key: Key) -> Int {
        guard var node = self.root else { return 0 }
        var rank = 0
        while !node.isLeaf {
            let c = node.childIndex(for: key)
            for j in 0..<c { rank += node.children[j].count }
            node = node.children[c]
        }
        return rank + node.lowerBound(key)
    }

    /// The number of keys less than or equal to `key`.
    @inlinable
    package func upperBoundRank(_ key: Key) -> Int {
        let r = self.lowerBoundRank(key)
        if r < self.count && self.element(atRank: r).key == key { return r + 1 }
        return r
    }

    /// The position of `key` in key order, or `nil` when absent.
    ///
    /// - Complexity: O(log *n*)
    @inlinable
    package func rank(of key: Key) -> Int? {
        let r = self.lowerBoundRank(key)
        guard r < self.count, self.element(atRank: r).key == key else { return nil }
        return r
    }

    /// The element at position `rank` in key order. - Precondition: `0 <= rank < count`.
    @inlinable
    package func element(atRank rank: Int) -> (key: Key, value: Value) {
        precondition(rank >= 0 && rank < self.count, "rank out of range")
        var node = self.root!
        var r = rank
        while !node.isLeaf {
            let child = node.child(atRank: r)
            r = child.rank
            node = node.children[child.index]
        }
        return (node.keys[r], node.values[r])
    }

    /// The smallest element.
    ///
    /// - Complexity: O(log *n*)
    @inlinable
    package var first: (key: Key, value: Value)? {
        guard var node = self.root else { return nil }
        while !node.isLeaf { node = node.children[0] }
        return (node.keys[0], node.values[0])
    }

    /// The largest element.
    ///
    /// - Complexity: O(log *n*)
    @inlinable
    package var last: (key: Key, value: Value)? {
        guard var node = self.root else { return nil }
        while !node.isLeaf { node = node.children[node.children.count - 1] }
        return (node.keys[node.width - 1], node.values[node.width - 1])
    }

    /// The element immediately before `key` in key order (`key` need not be present).
    @inlinable
    package func predecessor(of key: Key) -> (key: Key, value: Value)? {
        let r = self.lowerBoundRank(key)
        return r == 0 ? nil : self.element(atRank: r - 1)
    }

    /// The element immediately after `key` in key order (`key` need not be present).
    @inlinable
    package func successor(of key: Key) -> (key: Key, value: Value)? {
        let r = self.upperBoundRank(key)
        return r >= self.count ? nil : self.element(atRank: r)
    }
}
