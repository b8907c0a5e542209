import CanopyCore

extension Node {
    /// Nodes (objects and leaves) and leaves in this tree.
    ///
    /// - Complexity: O(*n*)
    func counts() -> (nodes: Int, leaves: Int) {
        switch self {
        case .empty: return (0, 0)
        case .leaf, .prioritizedLeaf: return (1, 1)
        case .children:
            var nodes = 1
            var leaves = 0
            // Walked by CanopyCore's own loop: iterating the map here would be generic code.
            self.forEachChild { _, child in
                let (n, l) = child.counts()
                nodes += n
                leaves += l
                return true
            }
            return (nodes, leaves)
        }
    }
}
