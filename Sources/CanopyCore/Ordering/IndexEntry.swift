/// A child's position in an order: its sort value (see ``QueryIndex/sortValue(of:)``), then its key.
///
/// Every index compares sort values in value order (priorities are never booleans or objects, so
/// priority order is value order on them; the key index uses an empty sort value for all), and
/// breaks ties by key: the order is total.
package struct IndexEntry: Sendable, Comparable {
    package var sortValue: Node
    package var key: ChildKey

    package init(sortValue: Node, key: ChildKey) {
        self.sortValue = sortValue
        self.key = key
    }

    @inlinable
    package static func compare(_ a: IndexEntry, _ b: IndexEntry) -> Int {
        let c = Node.compareValues(a.sortValue, b.sortValue)
        return c != 0 ? c : ChildKey.compare(a.key, b.key)
    }

    @inlinable
    package static func < (lhs: IndexEntry, rhs: IndexEntry) -> Bool { compare(lhs, rhs) < 0 }

    package static func == (lhs: IndexEntry, rhs: IndexEntry) -> Bool { compare(lhs, rhs) == 0 }
}

/// One end of a query range: a position `(value, key)` and whether it is included (see
/// *Queries*, "Query windows").
///
/// `startAt(v)` is `(v, min)` inclusive, `startAfter(v)` `(v, max)` exclusive, `endAt(v)` `(v, max)`
/// inclusive, `endBefore(v)` `(v, min)` exclusive; with a key argument the key replaces the sentinel.
package struct QueryBound: Sendable, Hashable {
    /// The index value; `nil` is null (the smallest). Unused (nil) for the key index.
    package var value: LeafValue?
    package var key: Key
    package var inclusive: Bool

    /// The key part of a position: a sentinel below or above every key, or a key.
    package enum Key: Sendable, Hashable {
        case min
        case key(ChildKey)
        case max
    }

    package init(value: LeafValue?, key: Key, inclusive: Bool) {
        self.value = value
        self.key = key
        self.inclusive = inclusive
    }

    /// Three-way comparison of a child's position with this bound's position.
    @inlinable
    package func compare(_ entry: IndexEntry) -> Int {
        let boundValue: Node = self.value.map(Node.leaf) ?? .empty
        let c = Node.compareValues(entry.sortValue, boundValue)
        if c != 0 { return c }
        switch self.key {
        case .min: return 1
        case .max: return -1
        case .key(let k): return ChildKey.compare(entry.key, k)
        }
    }

    /// Whether `entry` lies before this bound taken as a start (so is excluded by it).
    @inlinable
    package func excludesAsStart(_ entry: IndexEntry) -> Bool {
        let c = self.compare(entry)
        return self.inclusive ? c < 0 : c <= 0
    }

    /// Whether `entry` lies within this bound taken as an end.
    @inlinable
    package func includesAsEnd(_ entry: IndexEntry) -> Bool {
        let c = self.compare(entry)
        return self.inclusive ? c <= 0 : c < 0
    }
}
