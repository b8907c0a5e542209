extension WriteValue {
    /// This value as an entry at `path` writes it, with its server values resolved at `now`:
    /// `target` is the data now at the entry's target (the node a `.priority` entry gives its
    /// priority to), and a `.priority` entry resolves against that node's priority.
    ///
    /// The one place where a write's server values meet the data they apply to: the engine, the
    /// remote cache, the server's rules and `canopy rules test` all resolve through it.
    package func resolved(forEntryAt path: [ChildKey], target: Node, now: Int64) -> Node {
        guard !self.placeholders.isEmpty else { return self.node }
        let current = path.last?.isPriorityKey == true ? (target.priority.map(Node.leaf) ?? .empty) : target
        return self.resolved(against: current, now: now)
    }
}

extension WriteOperation {
    /// What entry `index` writes, with its server values resolved at `now` against `root` (the
    /// whole tree the write applies to).
    /// - Complexity: O(*d*) for a target at depth *d* when the entry has server values; O(1) otherwise.
    package func resolvedNode(ofEntry index: Int, root: Node, now: Int64) -> Node {
        let entry = self.entries[index]
        guard !entry.value.placeholders.isEmpty else { return entry.value.node }
        let target = root.node(at: self.path.keys + entry.path.prefix { !$0.isPriorityKey })
        return entry.value.resolved(forEntryAt: entry.path, target: target, now: now)
    }

    /// This write with every server value resolved at `now` against `root`, so that whatever judges
    /// it (the rules) sees the values the stored data will hold (`newData.child('at').val() == now`).
    /// - Complexity: O(*d*) per server value at depth *d*; the write itself when it has none.
    package func resolved(root: Node, now: Int64) -> WriteOperation {
        guard self.entries.contains(where: { !$0.value.placeholders.isEmpty }) else { return self }
        var resolved = self
        for i in resolved.entries.indices where !resolved.entries[i].value.placeholders.isEmpty {
            resolved.entries[i].value = WriteValue(node: self.resolvedNode(ofEntry: i, root: root, now: now))
        }
        return resolved
    }
}
