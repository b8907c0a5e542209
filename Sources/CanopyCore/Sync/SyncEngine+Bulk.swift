extension SyncEngine {
    /// Updates with at least this many entries group siblings and merge them in bulk.
    static var bulkThreshold: Int { 64 }

    /// Applies large groups of sibling entries (same parent) of a multi-path update by merging them
    /// into the parent's sorted children at once: O(*n* + *k* log *k*) instead of *k* separate
    /// insertions. Handled entries are removed from `values` and `removals`.
    /// A group is merged only when no other entry lies deeper below its parent, so the merged
    /// parent commutes with every other entry of the update.
    func applyInBulk(base: DatabasePath, values: inout [(path: [ChildKey], node: Node)], removals: inout [[ChildKey]], others: [[ChildKey]])
    {
        // The common shape: every entry is a direct child of the written location.
        if values.allSatisfy({ $0.path.count == 1 }) && removals.allSatisfy({ $0.count == 1 }) && others.allSatisfy({ $0.count <= 1 }) {
            var keys = ContiguousArray<ChildKey>()
            var nodes = ContiguousArray<Node>()
            keys.reserveCapacity(values.count + removals.count)
            nodes.reserveCapacity(values.count + removals.count)
            for (path, node) in values {
                keys.append(path[0])
                nodes.append(node)
            }
            for path in removals {
                keys.append(path[0])
                nodes.append(.empty)
            }
            let node = Self.merge(self.root.node(at: base.keys), keys: keys, nodes: nodes, order: KeyOrder.sortedPositions(keys))
            values.removeAll()
            removals.removeAll()
            if node.isEmpty { removals.append([]) } else { values.append(([], node)) }
            return
        }
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
            let keys = ContiguousArray(group.lazy.map(\.key))
            let nodes = ContiguousArray(group.lazy.map(\.node))
            merged.append(
                (parent, Self.merge(self.root.node(at: location), keys: keys, nodes: nodes, order: KeyOrder.sortedPositions(keys))))
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

    /// `node` with changes applied to its children (`.empty` removes a child): change `order[i]`
    /// is the `i`-th in key order, and of changes to the same key the last one wins, as
    /// sequential writes would.
    static func merge(_ node: Node, keys: ContiguousArray<ChildKey>, nodes: ContiguousArray<Node>, order: [UInt32]) -> Node {
        let old = node.childMap
        var outKeys = ContiguousArray<ChildKey>()
        var outNodes = ContiguousArray<Node>()
        outKeys.reserveCapacity(old.count + keys.count)
        outNodes.reserveCapacity(old.count + keys.count)
        var prioritized = 0
        func emit(_ key: ChildKey, _ child: Node) {
            if child.isEmpty { return }
            if child.priority != nil { prioritized += 1 }
            outKeys.append(key)
            outNodes.append(child)
        }
        var oi = old.makeIterator()
        var o = oi.next()
        var i = 0
        while i < order.count {
            let c = Int(order[i])
            // Later duplicates of a key win (equal keys are in their original order).
            if i + 1 < order.count && keys[Int(order[i + 1])] == keys[c] {
                i += 1
                continue
            }
            let key = keys[c]
            while let oe = o, ChildKey.compare(oe.key, key) < 0 {
                emit(oe.key, oe.value)
                o = oi.next()
            }
            if let oe = o, ChildKey.compare(oe.key, key) == 0 { o = oi.next() }
            emit(key, nodes[c])
            i += 1
        }
        while let oe = o {
            emit(oe.key, oe.value)
            o = oi.next()
        }
        // Writing children under a leaf keeps the leaf's priority, as `setChild` does.
        if outKeys.isEmpty { return .empty }
        return .children(
            Node.ChildrenNode(
                map: SortedMap(sortedKeys: outKeys, values: outNodes), priority: node.priority, prioritizedChildren: prioritized))
    }
}
