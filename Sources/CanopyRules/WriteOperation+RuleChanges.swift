package import CanopyCore

extension WriteOperation {
    /// The changes rules judge for this (resolved) write, all at once: one per entry, and a
    /// priority entry as a change of the node that gets it (rules judge a priority as part of its
    /// node; one given to a node left empty changes nothing).
    /// - Complexity: O(*e*) for *e* entries, plus O(*e* · *d* log *n*) when some set priorities.
    package func ruleChanges(root: Node) -> [RulesEngine.Change] {
        // A set (one entry at the write's own path): its change, with no array grown.
        if self.entries.count == 1, self.entries[0].path.isEmpty {
            return [RulesEngine.Change(path: self.path, value: self.entries[0].value.node)]
        }
        var changes: [RulesEngine.Change] = []
        changes.reserveCapacity(self.entries.count)
        for entry in self.entries where !entry.isPriority {
            let path = entry.path.isEmpty ? self.path : DatabasePath(self.path.keys + entry.path)
            changes.append(RulesEngine.Change(path: path, value: entry.value.node))
        }
        guard self.entries.contains(where: \.isPriority) else { return changes }
        var newRoot = root
        for change in changes { newRoot.set(change.value, at: change.path.keys[...]) }
        for entry in self.entries where entry.isPriority {
            let owner = self.path.keys + entry.path.dropLast()
            let node = newRoot.node(at: owner)
            guard !node.isEmpty else { continue }
            changes.append(RulesEngine.Change(path: DatabasePath(owner), value: node.withPriority(entry.value.node.leafValue)))
        }
        return changes
    }
}
