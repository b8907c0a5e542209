extension SyncEngine {
    /// Updates with at least this many entries group siblings and merge them in bulk.
    static var bulkThreshold: Int { 64 }

    /// Applies large groups of sibling entries (same parent) of a multi-path update by merging them
    /// into the parent's sorted children at once: O(*n* + *k* log *k*) instead of *k* separate
    /// insertions. Handled entries are removed from `values` and `removals`.
    /// A group is merged only when no other entry lies deeper below its parent, so the merged
    /// parent commutes with every other entry of the update.
    func applyInBulk(base: DatabasePath, values: inout [(path: [ChildKey], node: Node)], removals: inout [[ChildKey]], others: [[ChildKey]]) {
        var groups: [[ChildKey]: [(key: ChildKey, node: Node)]] = [:]
        for (path, node) in values where !path.isEmpty { groups[Array(path.dropLast()), default: []].append((path[path.count - 1], node)) }
        for path in removals where !path.isEmpty { groups[Array(path.dropLast()), default: []].append((path[path.count - 1], .empty)) }
        // Parents with an entry two or more levels below them are not merged.
        var deep = Set<ArraySlice<ChildKey>>()
        for path in values.map(\.path) + removals + others where path.count >= 2 {
            for length in 0...(path.count - 2) { deep.insert(path[..<length]) }
        }
        var merged: [(parent: [ChildKey], node: Node)] = []
        for (parent, group) in groups where group.count >= Self.bulkThreshold && !deep.contains(parent[...]) {
            let location = base.keys + parent
            let current = self.root.node(at: location)
            // Sort positions rather than (key, node) pairs: no copies while sorting.
            var order = Array(group.indices)
            group.withUnsafeBufferPointer { g in order.sort { ChildKey.compare(g[$0].key, g[$1].key) < 0 } }
            merged.append((parent, Self.merge(current, order.map { group[$0] })))
        }
        guard !merged.isEmpty else { return }
        let done = Set(merged.map(\.parent))
        values.removeAll { !$0.path.isEmpty && done.contains(Array($0.path.dropLast())) }
        removals.removeAll { !$0.isEmpty && done.contains(Array($0.dropLast())) }
        // A merged parent that ends up empty is a removal; the others are values.
        for (parent, node) in merged {
            if node.isEmpty { removals.append(parent) } else { values.append((parent, node)) }
        }
    }

    /// `node` with the sorted `changes` applied to its children (`.empty` removes a child).
    static func merge(_ node: Node, _ changes: [(key: ChildKey, node: Node)]) -> Node {
        let old = node.childMap
        var keys: [ChildKey] = []
        var nodes: [Node] = []
        keys.reserveCapacity(old.count + changes.count)
        nodes.reserveCapacity(old.count + changes.count)
        var oi = old.makeIterator()
        var o = oi.next()
        var i = 0
        while i < changes.count || o != nil {
            // Later duplicates of a key win, as sequential writes would.
            if i < changes.count, i + 1 < changes.count, changes[i + 1].key == changes[i].key {
                i += 1
                continue
            }
            let c = i < changes.count ? changes[i] : nil
            switch (o, c) {
            case let (oe?, ce?) where ChildKey.compare(oe.key, ce.key) == 0:
                if !ce.node.isEmpty { keys.append(ce.key); nodes.append(ce.node) }
                o = oi.next()
                i += 1
            case let (oe?, ce?) where ChildKey.compare(oe.key, ce.key) < 0:
                keys.append(oe.key)
                nodes.append(oe.value)
                o = oi.next()
            case let (_, ce?):
                if !ce.node.isEmpty { keys.append(ce.key); nodes.append(ce.node) }
                i += 1
            case let (oe?, nil):
                keys.append(oe.key)
                nodes.append(oe.value)
                o = oi.next()
            case (nil, nil):
                break
            }
        }
        // Writing children under a leaf keeps the leaf's priority, as `setChild` does.
        return Node.from(children: SortedMap(sortedKeys: keys, values: nodes), priority: node.priority)
    }
}
