extension SortedMap {
    /// The number of leading keys for which `isBelow` holds, for a predicate that holds for a
    /// prefix of the keys in order (true, …, true, false, …, false).
    ///
    /// - Complexity: O(log *n* · B)
    package func partitionRank(_ isBelow: (Key) -> Bool) -> Int {
        guard var node = self.root else { return 0 }
        var rank = 0
        while !node.isLeaf {
            // Children before the last one whose lower bound is below lie entirely below.
            let low = leadingCount(node.keys.count) { isBelow(node.keys[$0]) }
            let c = low == 0 ? 0 : low - 1
            if low == 0 { return rank }
            for j in 0..<c { rank += node.children[j].count }
            node = node.children[c]
        }
        return rank + leadingCount(node.keys.count) { isBelow(node.keys[$0]) }
    }
}
