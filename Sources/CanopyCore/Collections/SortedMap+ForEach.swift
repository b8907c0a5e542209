extension SortedMap {
    /// Calls `body` with each element in key order until it returns `false`: the walk of
    /// `for (key, value) in map`, without the iterator's stack (an allocation per loop, which a
    /// map of a few entries, such as a written record's fields, notices).
    ///
    /// - Returns: `false` when `body` stopped the walk.
    /// - Complexity: O(*n*).
    @inlinable @discardableResult
    package func forEachElement(while body: (Key, Value) throws -> Bool) rethrows -> Bool {
        guard let root = self.root else { return true }
        return try root.forEachElement(while: body)
    }
}

extension SortedMapNode {
    @inlinable
    func forEachElement(while body: (Key, Value) throws -> Bool) rethrows -> Bool {
        if self.isLeaf {
            for i in self.keys.indices where try !body(self.keys[i], self.values[i]) { return false }
            return true
        }
        for child in self.children where try !child.forEachElement(while: body) { return false }
        return true
    }
}
