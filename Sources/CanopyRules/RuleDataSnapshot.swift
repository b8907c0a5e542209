import CanopyCore

/// `root`, `data` and `newData` in rules (spec §3.4): a view of one version of the tree at a
/// location. Creating one and moving it (`child`, `parent`) never copies data.
struct RuleDataSnapshot: Sendable {
    /// The whole tree of this version (old or new), so `parent()` can climb.
    let tree: Node
    /// The location, from the root of `tree`.
    let path: [ChildKey]
    /// The node at `path`.
    let node: Node

    init(tree: Node, path: [ChildKey]) {
        self.tree = tree
        self.path = path
        self.node = tree.node(at: path)
    }

    /// A snapshot whose node the caller already has (it must be `tree.node(at: path)`).
    init(tree: Node, path: [ChildKey], node: Node) {
        self.tree = tree
        self.path = path
        self.node = node
    }

    /// The snapshot at a relative path (`/`-separated; empty segments ignored). Keys that are
    /// not valid database keys simply refer to nothing (spec §3.4, targaryen #136).
    /// - Complexity: O(*d* log *n*) for *d* segments.
    func child(_ relative: String) -> RuleDataSnapshot {
        var path = self.path
        var node = self.node
        for segment in relative.split(separator: "/", omittingEmptySubsequences: true) {
            let key = ChildKey(String(segment))
            path.append(key)
            node = node.child(key)
        }
        return RuleDataSnapshot(tree: self.tree, path: path, node: node)
    }

    /// The snapshot one level up, `nil` at the root.
    /// - Complexity: O(*d* log *n*) in the depth.
    func parent() -> RuleDataSnapshot? {
        guard !self.path.isEmpty else { return nil }
        return RuleDataSnapshot(tree: self.tree, path: Array(self.path.dropLast()))
    }

    var exists: Bool { !self.node.isEmpty }

    /// `val()`: the primitive, `null`, or an opaque value for a location with children.
    var value: RuleValue {
        switch self.node {
        case .empty: return .null
        case .children: return .opaque
        default: return RuleValue(self.node.leafValue)
        }
    }
}
