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

/// What a ``SortedMapNode`` keeps in front of its elements, in the same allocation.
@usableFromInline
struct SortedMapNodeHeader {
    /// Elements in this subtree.
    @usableFromInline var count: Int
    /// Keys in this node (and as many values, for a leaf, or children).
    @usableFromInline var width: Int
    /// Slots allocated for keys, and as many for values or children.
    @usableFromInline let capacity: Int
    @usableFromInline let isLeaf: Bool

    @usableFromInline
    init(count: Int, width: Int, capacity: Int, isLeaf: Bool) {
        self.count = count
        self.width = width
        self.capacity = capacity
        self.isLeaf = isLeaf
    }
}

/// A node of ``SortedMap``: a leaf holds elements, an internal node holds children and, for each
/// child, a lower bound of its keys (`keys[i] <= every key in children[i] < keys[i + 1]`).
///
/// Its keys, and its values or children, live in the node's own allocation after its header (one
/// allocation per node: a lookup follows one pointer per level, and a small map, such as a
/// record's few fields, is one object). `keys`, `values` and `children` are views of that storage,
/// valid while the node is alive; a node is changed only while uniquely referenced
/// (copy-on-write) by the one thread that owns the map.
@usableFromInline
final class SortedMapNode<Key: Comparable, Value>: ManagedBuffer<SortedMapNodeHeader, UInt64> {
    @usableFromInline static var leafCapacity: Int { 32 }
    @usableFromInline static var branchCapacity: Int { 32 }

    /// Bytes of the keys region for `capacity` keys, rounded up to whole words.
    @inlinable
    static func keyBytes(_ capacity: Int) -> Int { (capacity &* MemoryLayout<Key>.stride &+ 7) & ~7 }

    /// A node with room for `capacity` elements and none yet.
    @inlinable
    static func make(capacity: Int, isLeaf: Bool) -> SortedMapNode {
        let aligned = MemoryLayout<Key>.alignment <= 8 && MemoryLayout<Value>.alignment <= 8
        precondition(aligned, "SortedMap: keys and values aligned to over 8 bytes")
        let slotStride = isLeaf ? MemoryLayout<Value>.stride : MemoryLayout<SortedMapNode>.stride
        let bytes = keyBytes(capacity) &+ capacity &* slotStride
        let buffer = self.create(minimumCapacity: (bytes &+ 7) >> 3) { _ in
            SortedMapNodeHeader(count: 0, width: 0, capacity: capacity, isLeaf: isLeaf)
        }
        let node = unsafeDowncast(buffer, to: SortedMapNode.self)
        let raw = UnsafeMutableRawPointer(node.withUnsafeMutablePointerToElements { $0 })
        raw.bindMemory(to: Key.self, capacity: capacity)
        if isLeaf {
            (raw + keyBytes(capacity)).bindMemory(to: Value.self, capacity: capacity)
        } else {
            (raw + keyBytes(capacity)).bindMemory(to: SortedMapNode.self, capacity: capacity)
        }
        return node
    }

    /// A leaf holding `keys` and `values` (equal in number), with room for exactly them.
    @inlinable
    static func leaf(keys: some Collection<Key>, values: some Collection<Value>) -> SortedMapNode {
        let n = keys.count
        let node = make(capacity: Swift.max(n, 1), isLeaf: true)
        _ = UnsafeMutableBufferPointer(start: node.keyBase, count: n).initialize(from: keys)
        _ = UnsafeMutableBufferPointer(start: node.valueBase, count: n).initialize(from: values)
        node.head.pointee.width = n
        node.head.pointee.count = n
        return node
    }

    /// An internal node over `children` (at least one), with room for a branch's capacity and
    /// the one extra child an insertion adds before it splits.
    @inlinable
    static func branch(children: some Collection<SortedMapNode>) -> SortedMapNode {
        let n = children.count
        let node = make(capacity: Swift.max(branchCapacity &+ 1, n), isLeaf: false)
        var i = 0
        var count = 0
        for child in children {
            (node.keyBase + i).initialize(to: child.keyBase.pointee)
            (node.childBase + i).initialize(to: child)
            count &+= child.count
            i &+= 1
        }
        node.head.pointee.width = n
        node.head.pointee.count = count
        return node
    }

    /// A copy of this node with the same capacity (its values and children retained, not copied).
    @inlinable
    func copy() -> SortedMapNode {
        let node = SortedMapNode.make(capacity: self.slotCapacity, isLeaf: self.isLeaf)
        node.keyBase.initialize(from: self.keyBase, count: self.width)
        if self.isLeaf {
            node.valueBase.initialize(from: self.valueBase, count: self.width)
        } else {
            node.childBase.initialize(from: self.childBase, count: self.width)
        }
        node.head.pointee.width = self.width
        node.head.pointee.count = self.count
        return node
    }

    deinit {
        let width = self.head.pointee.width
        self.keyBase.deinitialize(count: width)
        if self.head.pointee.isLeaf {
            self.valueBase.deinitialize(count: width)
        } else {
            self.childBase.deinitialize(count: width)
        }
    }

    /// The header, through its address: `ManagedBuffer.header` is a stored class property, whose
    /// every access is checked for exclusivity at run time (a quarter of a window query's
    /// instructions); a node is changed only while uniquely referenced by the one thread that owns
    /// its map, so those checks cannot fail.
    @inlinable var head: UnsafeMutablePointer<SortedMapNodeHeader> {
        self.withUnsafeMutablePointerToHeader { $0 }
    }
    @inlinable var raw: UnsafeMutableRawPointer { UnsafeMutableRawPointer(self.withUnsafeMutablePointerToElements { $0 }) }
    @inlinable var keyBase: UnsafeMutablePointer<Key> { self.raw.assumingMemoryBound(to: Key.self) }
    @inlinable var valueBase: UnsafeMutablePointer<Value> {
        (self.raw + Self.keyBytes(self.head.pointee.capacity)).assumingMemoryBound(to: Value.self)
    }
    @inlinable var childBase: UnsafeMutablePointer<SortedMapNode> {
        (self.raw + Self.keyBytes(self.head.pointee.capacity)).assumingMemoryBound(to: SortedMapNode.self)
    }

    /// Elements in this subtree.
    @inlinable
    var count: Int {
        get { self.head.pointee.count }
        set { self.head.pointee.count = newValue }
    }

    @inlinable var isLeaf: Bool { self.head.pointee.isLeaf }

    /// The number of keys (leaf) or children (internal).
    @inlinable var width: Int { self.head.pointee.width }

    @inlinable var slotCapacity: Int { self.head.pointee.capacity }

    @inlinable var keys: UnsafeMutableBufferPointer<Key> { UnsafeMutableBufferPointer(start: self.keyBase, count: self.head.pointee.width) }
    /// Leaf only.
    @inlinable var values: UnsafeMutableBufferPointer<Value> {
        UnsafeMutableBufferPointer(start: self.valueBase, count: self.head.pointee.width)
    }
    /// Internal only.
    @inlinable var children: UnsafeMutableBufferPointer<SortedMapNode> {
        UnsafeMutableBufferPointer(start: self.childBase, count: self.head.pointee.isLeaf ? 0 : self.head.pointee.width)
    }

    /// In an internal node, the child holding the element at position `rank` of this subtree, and
    /// the element's position in that child.
    @inlinable
    func child(atRank rank: Int) -> (index: Int, rank: Int) {
        var r = rank
        var i = 0
        while r >= self.children[i].count {
            r -= self.children[i].count
            i += 1
        }
        return (i, r)
    }

    /// The largest key of this (non-empty) subtree.
    @inlinable
    var lastKey: Key {
        var node = self
        while !node.isLeaf { node = node.children[node.width &- 1] }
        return node.keys[node.width &- 1]
    }

    /// First index `i` with `keys[i] >= key` (binary search).
    @inlinable
    func lowerBound(_ key: Key) -> Int {
        let keys = self.keyBase
        return leadingCount(self.head.pointee.width) { keys[$0] < key }
    }

    /// In an internal node, the child that may hold `key`: the last `i` with `keys[i] <= key`, or 0.
    @inlinable
    func childIndex(for key: Key) -> Int {
        let keys = self.keyBase
        // The first index with keys[i] > key.
        let low = leadingCount(self.head.pointee.width) { !(key < keys[$0]) }
        return low == 0 ? 0 : low &- 1
    }
}
