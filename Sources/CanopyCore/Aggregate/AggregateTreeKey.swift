/// A sort value (see ``QueryIndex/sortValue(of:)``) reduced, when it can be, to two plain numbers
/// that compare as ``Node/compareValues(_:_:)`` compares it: its class in value order and, for a
/// boolean or a number, the value as an exact `Double`. Comparing two of these touches no `Node`,
/// `String` or reference count, which is most of what a probe of ``AggregateTree`` costs otherwise.
///
/// A string, an integer no `Double` holds exactly, or a non-finite double has no such form
/// (``isExact`` is false): any comparison involving one falls back to the full comparison.
struct SortRank {
    /// 0 null, 1 a boolean, 2 a number, 3 an object; -1 when ``number`` cannot stand for the value.
    let rank: Int8
    /// A boolean as 0 or 1, or the number.
    let number: Double

    init(_ value: Node) {
        switch value {
        case .empty: self = SortRank(rank: 0, number: 0)
        case .children: self = SortRank(rank: 3, number: 0)
        case .leaf(let v): self = SortRank(v)
        case .prioritizedLeaf(let p): self = SortRank(p.value)
        }
    }

    init(_ value: LeafValue?) {
        switch value {
        case nil: self = SortRank(rank: 0, number: 0)
        case .bool(let b)?: self = SortRank(rank: 1, number: b ? 1 : 0)
        case .int(let i)?:
            if let d = Double(exactly: i) { self = SortRank(rank: 2, number: d) } else { self = SortRank(rank: -1, number: 0) }
        case .double(let d)?: self = SortRank(rank: d.isFinite ? 2 : -1, number: d)
        case .string?: self = SortRank(rank: -1, number: 0)
        }
    }

    private init(rank: Int8, number: Double) {
        self.rank = rank
        self.number = number
    }

    var isExact: Bool { self.rank >= 0 }

    /// Three-way comparison of two exact ranks (both ``isExact``).
    @inline(__always)
    static func compare(_ a: SortRank, _ b: SortRank) -> Int {
        if a.rank != b.rank { return a.rank < b.rank ? -1 : 1 }
        return a.number < b.number ? -1 : (a.number > b.number ? 1 : 0)
    }
}

/// An ``IndexEntry`` as ``AggregateTree`` stores it: with the ``SortRank`` of its sort value, so
/// that the comparisons of a descent read two numbers, and the key only on a tie.
struct AggregateTreeKey {
    let sort: SortRank
    let entry: IndexEntry

    init(_ entry: IndexEntry) {
        self.sort = SortRank(entry.sortValue)
        self.entry = entry
    }

    /// Three-way comparison in the entries' order (``IndexEntry/compare(_:_:)``).
    @inline(__always)
    static func compare(_ a: AggregateTreeKey, _ b: AggregateTreeKey) -> Int {
        guard a.sort.isExact && b.sort.isExact else { return IndexEntry.compare(a.entry, b.entry) }
        let c = SortRank.compare(a.sort, b.sort)
        return c != 0 ? c : ChildKey.compare(a.entry.key, b.entry.key)
    }

    /// Where this entry lies against `bound` (whose value's rank is `boundRank`): as
    /// ``QueryBound/compare(_:)``.
    @inline(__always)
    func compare(to bound: QueryBound, rank boundRank: SortRank) -> Int {
        guard self.sort.isExact && boundRank.isExact else { return bound.compare(self.entry) }
        let c = SortRank.compare(self.sort, boundRank)
        if c != 0 { return c }
        switch bound.key {
        case .min: return 1
        case .max: return -1
        case .key(let k): return ChildKey.compare(self.entry.key, k)
        }
    }
}
