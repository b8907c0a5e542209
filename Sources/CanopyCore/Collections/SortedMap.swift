/// A sorted map with value semantics: a persistent, copy-on-write B+tree with cached subtree counts.
///
/// Besides O(log *n*) lookup, insertion and removal, the cached counts make `count` O(1) and give
/// rank queries (`rank(of:)`, `element(atRank:)`, predecessor and successor) in O(log *n*). Copies
/// share structure: copying a map is O(1), and a mutation of a shared map copies only the
/// O(log *n*) tree nodes on the path it changes, so a snapshot taken before a write never changes.
/// A map that is not shared is mutated in place.
package struct SortedMap<Key: Comparable, Value> {
    @usableFromInline typealias Node = SortedMapNode<Key, Value>

    @usableFromInline var root: Node?

    @inlinable package init() { self.root = nil }

    @usableFromInline init(root: Node?) { self.root = root }

    /// The number of elements.
    ///
    /// - Complexity: O(1)
    @inlinable package var count: Int { self.root?.count ?? 0 }

    @inlinable package var isEmpty: Bool { self.root == nil }

    /// Whether `self` and `other` share the same storage (so are certainly equal).
    @inlinable package func isIdentical(to other: SortedMap) -> Bool { self.root === other.root }
}

/// A node of ``SortedMap``: a leaf holds elements, an internal node holds children and, for each
/// child, a lower bound of its keys (`keys[i] <= every key in children[i] < keys[i + 1]`).
@usableFromInline
final class SortedMapNode<Key: Comparable, Value> {
    @usableFromInline static var leafCapacity: Int { 32 }
    @usableFromInline static var branchCapacity: Int { 32 }

    // Unchecked exclusivity: a node is mutated only while uniquely referenced (copy-on-write) by
    // the one thread that owns the map, so the dynamic checks (3 per level of every insertion)
    // cannot fail.

    /// Elements in this subtree.
    @exclusivity(unchecked) @usableFromInline var count: Int
    @exclusivity(unchecked) @usableFromInline var keys: ContiguousArray<Key>
    /// Leaf only.
    @exclusivity(unchecked) @usableFromInline var values: ContiguousArray<Value>
    /// Internal only; empty for a leaf.
    @exclusivity(unchecked) @usableFromInline var children: ContiguousArray<SortedMapNode>

    @usableFromInline
    init(keys: ContiguousArray<Key>, values: ContiguousArray<Value>) {
        self.keys = keys
        self.values = values
        self.children = []
        self.count = keys.count
    }

    @usableFromInline
    init(children: ContiguousArray<SortedMapNode>) {
        self.children = children
        self.keys = ContiguousArray(children.map { $0.keys[0] })
        self.values = []
        self.count = children.reduce(0) { $0 + $1.count }
    }

    @usableFromInline
    init(copying other: SortedMapNode) {
        self.count = other.count
        self.keys = other.keys
        self.values = other.values
        self.children = other.children
    }

    @inlinable var isLeaf: Bool { self.children.isEmpty }

    /// The number of keys (leaf) or children (internal).
    @inlinable var width: Int { self.keys.count }

    /// The largest key of this (non-empty) subtree.
    @inlinable
    var lastKey: Key {
        var node = self
        while !node.isLeaf { node = node.children[node.children.count &- 1] }
        return node.keys[node.keys.count &- 1]
    }

    /// First index `i` with `keys[i] >= key` (binary search).
    @inlinable
    func lowerBound(_ key: Key) -> Int {
        // Through a buffer pointer: no retain of each probed key.
        self.keys.withUnsafeBufferPointer { keys in
            var low = 0
            var high = keys.count
            while low < high {
                let mid = (low &+ high) >> 1
                if keys[mid] < key { low = mid &+ 1 } else { high = mid }
            }
            return low
        }
    }

    /// In an internal node, the child that may hold `key`: the last `i` with `keys[i] <= key`, or 0.
    @inlinable
    func childIndex(for key: Key) -> Int {
        self.keys.withUnsafeBufferPointer { keys in
            var low = 0
            var high = keys.count
            // first index with keys[i] > key
            while low < high {
                let mid = (low &+ high) >> 1
                if key < keys[mid] { high = mid } else { low = mid &+ 1 }
            }
            return low == 0 ? 0 : low - 1
        }
    }
}
