/// The children a filtered query shows (its window), kept live: the one place where the range,
/// `limitToFirst` and `limitToLast` of a query are turned into the set of children it shows, and
/// where that set is updated after a write. (See the Queries article, *Query windows*.)
///
/// The window is the ranks `[lo, hi)` of the location's children in the query's order: `lo` is the
/// first child at or after the start bound, `hi` the first child past the end bound; then
/// `limitToFirst(n)` keeps the first `n` of those ranks and `limitToLast(n)` the last `n`. When a
/// child leaves a limited window (removed, or moved out of the range), the next child in order on
/// that side is pulled in; when a child enters, the one at the far edge is pushed out.
package struct QueryWindow {
    package let params: QueryParams
    /// The window's children in the query's order.
    package private(set) var entries = SortedMap<IndexEntry, Node>()
    /// The window as a node: its children in key order, without the location's priority or value.
    package private(set) var node: Node = .empty

    /// The window of `order` (the location's children in the query's order).
    /// - Complexity: O(log *n* + *w* log *w*) for a window of *w* children.
    package init(params: QueryParams, order: ChildOrder) {
        self.params = params
        _ = self.rebuild(order: order)
    }

    /// What a query shows of `location` now, computed from scratch (a one-shot read, on or off the
    /// loop): the location's own key map serves key order; any other order sorts the children.
    /// - Complexity: O(log *n* + *w* log *w*) in key order, else O(*n* log *n*).
    package static func node(of location: Node, params: QueryParams) -> Node {
        guard params.isFiltered else { return location }
        let order: ChildOrder
        if params.index.isKeyOrder(for: location) {
            order = .keys(location.childMap)
        } else {
            order = .index(ChildIndex(index: params.index, node: location).entries)
        }
        return QueryWindow(params: params, order: order).node
    }

    private func entry(_ key: ChildKey, _ child: Node) -> IndexEntry {
        IndexEntry(sortValue: self.params.index.sortValue(of: child), key: key)
    }

    /// Recomputes the window from scratch and returns what changed, in key order.
    /// - Complexity: O(log *n* + *w* log *w*) plus O(*w*) to compare the two windows.
    @discardableResult
    package mutating func rebuild(order: ChildOrder) -> ChildChanges {
        let old = self.node
        let children = order.children(in: order.range(self.params))
        self.entries = SortedMap(sortedKeys: children.map { self.entry($0.key, $0.node) }, values: children.lazy.map(\.node))
        var pairs = children
        pairs.sort { ChildKey.compare($0.key, $1.key) < 0 }
        self.node = Node.from(children: SortedMap(sortedKeys: pairs.lazy.map(\.key), values: pairs.lazy.map(\.node)))
        return ChildChanges(old: old, new: self.node, candidates: nil)
    }

    /// Updates the window after a write that changed only the children `changed` of the location
    /// (`order` is the location's order after the write) and returns what changed in the window.
    ///
    /// Every other child keeps its sort value, so its rank moves by at most `k` (one per changed
    /// child), and so do the window's edges: a child that is not one of the `k` can only enter or
    /// leave the window within `2k` ranks of an edge. Those children, the changed ones, and the
    /// old window's first and last `2k` are all that is looked at.
    /// - Complexity: O(*k* log *n*) for *k* changed children, whatever the window's size.
    package mutating func update(changed: [ChildKey], location: Node, order: ChildOrder) -> ChildChanges {
        let span = 2 * changed.count
        let range = order.range(self.params)
        if 2 * span >= max(self.entries.count, range.count) {
            // The edges to look at cover both windows: a recount costs no more, O(*w*) ≤ O(*k*).
            return self.rebuild(order: order)
        }
        var keys = changed
        keys.reserveCapacity(changed.count + 4 * span)
        // The old window's first and last `span` children.
        var count = 0
        for e in self.entries {
            if count >= span { break }
            keys.append(e.key.key)
            count += 1
        }
        let oldCount = self.entries.count
        if oldCount > span {
            for e in self.entries.elements(fromRank: max(span, oldCount - span)) { keys.append(e.key.key) }
        }
        // The new range's first and last `span` ranks.
        if !range.isEmpty {
            let head = range.lowerBound..<min(range.upperBound, range.lowerBound + span)
            let tail = max(head.upperBound, range.upperBound - span)..<range.upperBound
            keys.append(contentsOf: order.keys(in: head))
            keys.append(contentsOf: order.keys(in: tail))
        }
        var changes = ChildChanges()
        var seen = Set<ChildKey>()
        for k in keys where seen.insert(k).inserted {
            let old = self.node.child(k)
            let new = location.child(k)
            let inNew = !new.isEmpty && range.contains(order.rank(of: self.entry(k, new)))
            switch (!old.isEmpty, inNew) {
            case (true, true):
                if old != new {
                    changes.changed.append((k, old, new))
                    self.entries.removeValue(forKey: self.entry(k, old))
                    self.entries.updateValue(new, forKey: self.entry(k, new))
                    self.node.setChild(k, to: new)
                }
            case (true, false):
                changes.removed.append((k, old))
                self.entries.removeValue(forKey: self.entry(k, old))
                self.node.setChild(k, to: .empty)
            case (false, true):
                changes.added.append((k, new))
                self.entries.updateValue(new, forKey: self.entry(k, new))
                self.node.setChild(k, to: new)
            case (false, false):
                break
            }
        }
        changes.sortByKey()
        return changes
    }
}

extension ChildOrder {
    /// The ranks a query's window covers: from the first child at or after the start bound to the
    /// last one at or before the end bound, then cut to the first or last `n` by a limit.
    /// - Complexity: O(log *n*)
    package func range(_ params: QueryParams) -> Range<Int> {
        params.ranks(count: self.count) { self.partitionRank($0) }
    }
}

extension QueryParams {
    /// The ranks the range and limit cover among `count` children in this order, given how to
    /// count the children for which a predicate holds (one that holds on a prefix of the order).
    /// - Complexity: two calls of `partitionRank`.
    package func ranks(count: Int, partitionRank: ((IndexEntry) -> Bool) -> Int) -> Range<Int> {
        var lo = 0
        var hi = count
        if let start = self.start { lo = partitionRank { start.excludesAsStart($0) } }
        if let end = self.end { hi = partitionRank { end.includesAsEnd($0) } }
        if hi < lo { hi = lo }
        switch self.limit {
        case .first(let n)?: hi = min(hi, lo + n)
        case .last(let n)?: lo = max(lo, hi - n)
        case nil: break
        }
        return lo..<hi
    }
}
