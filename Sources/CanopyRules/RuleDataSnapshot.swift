import CanopyCore

/// `root`, `data` and `newData` in rules (the DocC article *The Rules Language*, *Snapshots*): a view of one version of the tree at a
/// location. Creating one and moving it (`child`, `parent`) never copies data.
struct RuleDataSnapshot: Sendable {
    /// Whether this is a view of the tree after the write (`newData`) rather than before.
    let isNew: Bool
    /// The location, from the root of its version of the tree.
    let path: ArraySlice<ChildKey>
    /// The node at `path`.
    let node: Node

    init(isNew: Bool, path: ArraySlice<ChildKey>, node: Node) {
        self.isNew = isNew
        self.path = path
        self.node = node
    }

    /// The snapshot at a relative path (`/`-separated; empty segments ignored). Keys that are
    /// not valid database keys simply refer to nothing (*The Rules Language*, *Snapshots*).
    /// - Complexity: O(*d* log *n*) for *d* segments.
    func child(_ relative: String) -> RuleDataSnapshot { self.child(Self.keys(relative)) }

    /// The keys of a relative path as `child()` takes it: `/`-separated, empty segments ignored.
    static func keys(_ relative: String) -> [ChildKey] {
        relative.split(separator: "/", omittingEmptySubsequences: true).map { ChildKey(String($0)) }
    }

    /// The snapshot at the relative path `keys` (a literal path, split once when the rule was compiled).
    /// - Complexity: O(*d* log *n*) for *d* keys.
    func child(_ keys: [ChildKey]) -> RuleDataSnapshot {
        guard !keys.isEmpty else { return self }
        var path = Array(self.path)
        path.append(contentsOf: keys)
        return RuleDataSnapshot(isNew: self.isNew, path: path[...], node: self.node.node(at: keys))
    }

    /// Whether the node at the relative path `keys` exists (no snapshot built).
    /// - Complexity: O(*d* log *n*) for *d* keys.
    func hasChild(_ keys: [ChildKey]) -> Bool { !self.node.node(at: keys).isEmpty }

    /// The snapshot one level up, `nil` at the root; `lookup` finds a node in this snapshot's
    /// version of the tree.
    /// - Complexity: that of `lookup`, O(*d* log *n*) in the depth.
    func parent(lookup: (ArraySlice<ChildKey>) -> Node) -> RuleDataSnapshot? {
        guard !self.path.isEmpty else { return nil }
        let up = self.path.dropLast()
        return RuleDataSnapshot(isNew: self.isNew, path: up, node: lookup(up))
    }

    var exists: Bool { !self.node.isEmpty }

    /// `val()`: the primitive, `null`, or an opaque value for a location with children.
    var value: RuleValue { RuleValue(val: self.node) }
}
