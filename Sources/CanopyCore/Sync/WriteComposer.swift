/// Composes writes made one after another (a batch, a transaction's writes) into one
/// ``WriteOperation`` with the same outcome, so that they are applied, journaled and observed as one
/// write: one journal record, one round of events.
///
/// Writes that touch disjoint locations are kept as they are (their server values resolve when the
/// composed write is applied, against the data they would have seen). Where a write touches a
/// location an earlier one wrote (at, above or below it), the two are merged into one concrete value
/// at the higher location, with server values resolved exactly as sequential writes would resolve
/// them. Loop thread only (it reads the tree through `current`).
package struct WriteComposer {
    /// Non-overlapping entries, absolute paths, in the order they were added (`nil`: merged away).
    private var entries: [(path: [ChildKey], value: WriteValue)?] = []
    private var live = 0
    /// For many entries: the entry at each target path, and how many entries lie strictly below each
    /// path (built once there are more than ``indexThreshold`` entries).
    private var targets: [[ChildKey]: Int]?
    private var below: [[ChildKey]: Int] = [:]
    private static var indexThreshold: Int { 16 }

    package init() {}

    /// Whether nothing was added (or everything added cancelled out into nothing).
    package var isEmpty: Bool { self.live == 0 }

    /// Adds `write` after the writes added so far.
    ///
    /// - Parameters:
    ///   - now: The time server values resolve to (the time the composed write is applied).
    ///   - current: The data at a path before the first write (the tree now).
    /// - Complexity: O(*e* · *d*) for *e* entries at depth *d* when it touches nothing written before;
    ///   a merge costs O(*d* log *n*) per merged entry.
    package mutating func add(_ write: WriteOperation, now: Int64, current: (ArraySlice<ChildKey>) -> Node) {
        for entry in write.entries {
            self.add(path: write.path.keys + entry.path, value: entry.value, now: now, current: current)
        }
    }

    /// The composed write, `nil` when nothing was added.
    package func operation() -> WriteOperation? {
        var paths: [(path: [ChildKey], value: WriteValue)] = []
        paths.reserveCapacity(self.live)
        for entry in self.entries { if let entry { paths.append(entry) } }
        guard var base = paths.first.map({ Self.target($0.path) }) else { return nil }
        for (path, _) in paths.dropFirst() {
            let target = Self.target(path)
            var common = 0
            while common < base.count && common < target.count && base[common] == target[common] { common += 1 }
            base.removeLast(base.count - common)
        }
        let entries = paths.map { WriteOperation.Entry(path: Array($0.path[base.count...]), value: $0.value) }
        return WriteOperation(path: DatabasePath(base), entries: entries)
    }

    /// The common case without building a composer: a few writes none of whose entries touch
    /// another's location, combined into one write as they are (entries under a write at the
    /// combined location are reused unchanged). `nil` when they overlap or are many: use ``add(_:now:current:)``.
    ///
    /// - Complexity: O(*e*² · *d*) for *e* ≤ 16 entries at depth *d*.
    package static func disjoint(_ writes: [WriteOperation]) -> WriteOperation? {
        // Through buffer pointers: the writes, their paths and entries are read in place, not
        // copied (retained) at every access.
        writes.withUnsafeBufferPointer { Self.disjoint(in: $0) }
    }

    private static func disjoint(in writes: UnsafeBufferPointer<WriteOperation>) -> WriteOperation? {
        var total = 0
        for w in writes.indices { total &+= writes[w].entries.count }
        guard total > 0, total <= Self.indexThreshold else { return nil }
        // A write applies its values before its removals; in turn, a removal that empties a node
        // (which loses its priority) before a value written below it would not: compose those.
        var removedBefore = false
        for w in writes.indices {
            let (values, removals) = writes[w].entries.withUnsafeBufferPointer { entries in
                var values = false
                var removals = false
                for e in entries.indices where !Self.isPriority(entries[e].path) {
                    if entries[e].value.node.isEmpty { removals = true } else { values = true }
                }
                return (values, removals)
            }
            if values && removedBefore { return nil }
            removedBefore = removedBefore || removals
        }
        // Two targets of different writes overlap when one is at or below the other (the entries
        // of one write stay together, applied as that write applies them). Writes whose locations
        // diverge cannot overlap.
        for w in writes.indices {
            for v in (w &+ 1)..<writes.count where Self.overlap(writes[w], writes[v]) { return nil }
        }
        // The location of the composed write: the longest prefix of every target.
        let first = writes.firstIndex { !$0.entries.isEmpty }!
        let common = Self.commonLength(writes, first: first)
        // A write at the composed location lends its path (no new array).
        let location: DatabasePath
        if let at = writes.firstIndex(where: { !$0.entries.isEmpty && $0.path.keys.count == common }) {
            location = writes[at].path
        } else {
            location = DatabasePath(Self.prefix(common, of: writes[first].path.keys, writes[first].entries[0].path))
        }
        var entries: [WriteOperation.Entry] = []
        entries.reserveCapacity(total)
        for w in writes.indices {
            let baseCount = writes[w].path.keys.count
            for e in writes[w].entries.indices {
                // One at a time: `append(contentsOf:)` copies through the runtime's generic array
                // copy, several times slower for a few entries.
                if baseCount == common {
                    entries.append(writes[w].entries[e])
                } else {
                    let path = Self.relative(writes[w].path.keys, writes[w].entries[e].path, from: common)
                    entries.append(WriteOperation.Entry(path: path, value: writes[w].entries[e].value))
                }
            }
        }
        return WriteOperation(path: location, entries: entries)
    }

    /// Whether a target of `a` is at, above or below a target of `b` (writes with no entries
    /// overlap nothing). Keys are compared in place, through buffer pointers.
    private static func overlap(_ a: WriteOperation, _ b: WriteOperation) -> Bool {
        a.path.keys.withUnsafeBufferPointer { aBase in
            b.path.keys.withUnsafeBufferPointer { bBase in
                let shorter = min(aBase.count, bBase.count)
                var shared = 0
                while shared < shorter && aBase[shared] == bBase[shared] { shared &+= 1 }
                guard shared == shorter else { return false }
                // One location at or above the other: compare each entry of the higher with the
                // lower's location below it, then each of its entries.
                if aBase.count <= bBase.count {
                    return Self.overlaps(a.entries, below: UnsafeBufferPointer(rebasing: bBase[shared...]), b.entries)
                }
                return Self.overlaps(b.entries, below: UnsafeBufferPointer(rebasing: aBase[shared...]), a.entries)
            }
        }
    }

    /// Whether the target of an entry of `highs` is at, above or below `between` followed by the
    /// target of an entry of `lows`.
    private static func overlaps(
        _ highs: [WriteOperation.Entry], below between: UnsafeBufferPointer<ChildKey>, _ lows: [WriteOperation.Entry]
    )
        -> Bool
    {
        highs.withUnsafeBufferPointer { highs in
            lows.withUnsafeBufferPointer { lows in
                for h in highs.indices {
                    let related = highs[h].path.withUnsafeBufferPointer { highPath in
                        for l in lows.indices where lows[l].path.withUnsafeBufferPointer({ Self.related(highPath, between, $0) }) {
                            return true
                        }
                        return false
                    }
                    if related { return true }
                }
                return false
            }
        }
    }

    /// The length of the longest prefix shared by the target of every entry; `first` is the
    /// first write with entries.
    private static func commonLength(_ writes: UnsafeBufferPointer<WriteOperation>, first: Int) -> Int {
        writes[first].path.keys.withUnsafeBufferPointer { firstBase in
            writes[first].entries[0].path.withUnsafeBufferPointer { firstPath in
                var common = firstBase.count &+ Self.targetCount(firstPath)
                for w in writes.indices where !writes[w].entries.isEmpty {
                    writes[w].path.keys.withUnsafeBufferPointer { base in
                        let limit = min(common, firstBase.count, base.count)
                        var shared = 0
                        while shared < limit && firstBase[shared] == base[shared] { shared &+= 1 }
                        if shared < min(firstBase.count, base.count) || shared == common {
                            common = shared
                            return
                        }
                        writes[w].entries.withUnsafeBufferPointer { entries in
                            for e in entries.indices {
                                entries[e].path.withUnsafeBufferPointer { path in
                                    let end = min(common, base.count &+ Self.targetCount(path))
                                    var same = shared
                                    while same < end && Self.sameKey(firstBase, firstPath, base, path, same) { same &+= 1 }
                                    common = same
                                }
                            }
                        }
                    }
                }
                return common
            }
        }
    }

    /// Whether `path` ends in `.priority`.
    @inline(__always)
    private static func isPriority(_ path: [ChildKey]) -> Bool {
        path.withUnsafeBufferPointer { $0.count > 0 && $0[$0.count &- 1].isPriorityKey }
    }

    /// The length of the path an entry writes: its parent's for a `.priority` path.
    @inline(__always)
    private static func targetCount(_ path: UnsafeBufferPointer<ChildKey>) -> Int {
        path.count > 0 && path[path.count &- 1].isPriorityKey ? path.count &- 1 : path.count
    }

    /// Whether the target of `a` is at, above or below `between` followed by the target of `b`.
    private static func related(
        _ a: UnsafeBufferPointer<ChildKey>, _ between: UnsafeBufferPointer<ChildKey>, _ b: UnsafeBufferPointer<ChildKey>
    ) -> Bool {
        let shorter = min(Self.targetCount(a), between.count &+ Self.targetCount(b))
        var i = 0
        while i < shorter {
            if i < between.count {
                if a[i] != between[i] { return false }
            } else if a[i] != b[i &- between.count] {
                return false
            }
            i &+= 1
        }
        return true
    }

    /// Whether the `i`-th keys of `a` followed by `aPath` and of `b` followed by `bPath` are equal
    /// (compared in place).
    @inline(__always)
    private static func sameKey(
        _ a: UnsafeBufferPointer<ChildKey>, _ aPath: UnsafeBufferPointer<ChildKey>, _ b: UnsafeBufferPointer<ChildKey>,
        _ bPath: UnsafeBufferPointer<ChildKey>, _ i: Int
    ) -> Bool {
        if i < a.count { return i < b.count ? a[i] == b[i] : a[i] == bPath[i &- b.count] }
        return i < b.count ? aPath[i &- a.count] == b[i] : aPath[i &- a.count] == bPath[i &- b.count]
    }

    /// The first `count` keys of `base` followed by `path`.
    private static func prefix(_ count: Int, of base: [ChildKey], _ path: [ChildKey]) -> [ChildKey] {
        var keys: [ChildKey] = []
        keys.reserveCapacity(count)
        for i in 0..<count { keys.append(i < base.count ? base[i] : path[i &- base.count]) }
        return keys
    }

    /// The keys of `base` followed by `path`, from the `start`-th.
    private static func relative(_ base: [ChildKey], _ path: [ChildKey], from start: Int) -> [ChildKey] {
        guard base.count > start else { return Array(path[(start &- base.count)...]) }
        var keys: [ChildKey] = []
        keys.reserveCapacity(base.count &- start &+ path.count)
        for i in start..<base.count { keys.append(base[i]) }
        for key in path { keys.append(key) }
        return keys
    }

    // MARK: - Internals

    /// The node a path writes: its parent for a `.priority` path.
    private static func target(_ path: [ChildKey]) -> [ChildKey] {
        path.last?.isPriorityKey == true ? Array(path.dropLast()) : path
    }

    private mutating func add(path: [ChildKey], value: WriteValue, now: Int64, current: (ArraySlice<ChildKey>) -> Node) {
        let target = Self.target(path)
        let overlapping = self.overlapping(target)
        guard !overlapping.isEmpty else {
            self.append(path, value)
            return
        }
        // Merge into one concrete value at the highest location involved. The overlapping entries
        // do not overlap one another, so they apply in any order, each against the data before.
        let top = overlapping.map { Self.target(self.entries[$0]!.path) }.min { $0.count < $1.count }!
        var high = top.count < target.count ? top : target
        var merged = overlapping
        // A write below a leaf replaces the leaf, for good: writing there and then removing what
        // was written removes the leaf too. So merge at the leaf, with every entry below it.
        if let leaf = Self.leafAbove(high, current: current) {
            high = leaf
            merged = self.overlapping(high)
        }
        var node = current(high[...])
        for index in merged {
            let entry = self.entries[index]!
            let concrete = Self.resolve(entry.value, at: entry.path, in: current(Self.target(entry.path)[...]), now: now)
            node.set(concrete, at: entry.path[high.count...])
            self.remove(index)
        }
        let relative = path[high.count...]
        node.set(Self.resolve(value, at: path, in: node.node(at: Self.target(Array(relative))), now: now), at: relative)
        self.append(high, WriteValue(node: node))
    }

    /// The path of the leaf strictly above `path` in the tree now, if there is one (there is at most one:
    /// below a leaf there is no data).
    private static func leafAbove(_ path: [ChildKey], current: (ArraySlice<ChildKey>) -> Node) -> [ChildKey]? {
        var node = current([])
        for depth in 0..<path.count {
            switch node {
            case .children: node = node.child(path[depth])
            case .empty: return nil
            case .leaf, .prioritizedLeaf: return Array(path[..<depth])
            }
        }
        return nil
    }

    /// `value` written at `path` with its server values resolved against `node`, the data at the
    /// path's target (a `.priority` value resolves against the target's priority).
    private static func resolve(_ value: WriteValue, at path: [ChildKey], in node: Node, now: Int64) -> Node {
        value.resolved(forEntryAt: path, target: node, now: now)
    }

    /// The live entries whose target is at, above or below `target`.
    private func overlapping(_ target: [ChildKey]) -> [Int] {
        guard let targets = self.targets else {
            var found: [Int] = []
            for (index, entry) in self.entries.enumerated() {
                guard let entry else { continue }
                let other = Self.target(entry.path)
                if other.count <= target.count ? target.starts(with: other) : other.starts(with: target) { found.append(index) }
            }
            return found
        }
        for length in 0...target.count {
            if let index = targets[Array(target[..<length])] { return [index] }
        }
        guard self.below[target, default: 0] > 0 else { return [] }
        return self.entries.indices.filter { index in
            guard let entry = self.entries[index] else { return false }
            return Self.target(entry.path).starts(with: target)
        }
    }

    private mutating func append(_ path: [ChildKey], _ value: WriteValue) {
        self.entries.append((path, value))
        self.live += 1
        if self.targets != nil {
            self.index(self.entries.count - 1, adding: 1)
        } else if self.live > Self.indexThreshold {
            self.targets = [:]
            for index in self.entries.indices where self.entries[index] != nil { self.index(index, adding: 1) }
        }
    }

    private mutating func remove(_ index: Int) {
        if self.targets != nil { self.index(index, adding: -1) }
        self.entries[index] = nil
        self.live -= 1
    }

    private mutating func index(_ index: Int, adding delta: Int) {
        let target = Self.target(self.entries[index]!.path)
        self.targets![target] = delta > 0 ? index : nil
        for length in 0..<target.count { self.below[Array(target[..<length]), default: 0] += delta }
    }
}
