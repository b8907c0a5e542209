/// What an applied write did to one location, for a subscriber that follows the location's data
/// (a server-sent event stream, a WebSocket default listen): replace the value at a path inside
/// it, or set several paths inside it at once.
package enum LocationChange {
    /// The value at `location + path` is now `node` (`.empty` when deleted).
    case put(path: [ChildKey], node: Node)
    /// At `location + path`, each member's relative path now holds its node.
    case patch(path: [ChildKey], members: [(path: [ChildKey], node: Node)])
}

extension WriteOperation {
    /// How this write, once applied (`root` is the tree after it), changed the data at `location`;
    /// `nil` when it did not touch the location.
    ///
    /// Priority entries are left out (server-sent event streams leave priorities out), unless
    /// `priorities` is set: then a priority entry reports the node whose priority it set, whole.
    ///
    /// - Complexity: O(*e* · *d* log *n*) for *e* entries at depth *d*: proportional to the written
    ///   entries, never to the location's size.
    package func change(at location: DatabasePath, root: Node, priorities: Bool = false) -> LocationChange? {
        var paths: [[ChildKey]] = []
        paths.reserveCapacity(self.entries.count)
        for entry in self.entries {
            if !entry.isPriority {
                paths.append(entry.path)
            } else if priorities {
                paths.append(Array(entry.path.dropLast()))
            }
        }
        let at = self.path
        // A set, or a priority on the written location itself, replaces the written location.
        let replacesAll = paths.contains { $0.isEmpty }
        if location.contains(at) {
            // At or below the location.
            let relative = Array(at.keys[location.keys.count...])
            if replacesAll { return .put(path: relative, node: root.node(at: at.keys)) }
            let members = paths.map { (path: $0, node: root.node(at: at.keys + $0)) }
            return members.isEmpty ? nil : .patch(path: relative, members: members)
        }
        guard at.contains(location) else { return nil }
        // Above the location: translate into it.
        if replacesAll { return .put(path: [], node: root.node(at: location.keys)) }
        let below = location.keys[at.keys.count...]
        var members: [(path: [ChildKey], node: Node)] = []
        for path in paths {
            if path.count <= below.count {
                if path.elementsEqual(below.prefix(path.count)) {
                    // The entry replaces the location or an ancestor of it.
                    return .put(path: [], node: root.node(at: location.keys))
                }
            } else if path.prefix(below.count).elementsEqual(below) {
                let inside = Array(path[below.count...])
                members.append((inside, root.node(at: location.keys + inside)))
            }
        }
        if members.isEmpty { return nil }
        if members.count == 1 { return .put(path: members[0].path, node: members[0].node) }
        return .patch(path: [], members: members)
    }
}

extension ViewChange {
    /// The change of a filtered query's window as seen at its location: a patch with the children
    /// that entered or changed (their new data) and then those that left (`.empty`), each group in
    /// key order; a put of the whole window when it was or became no children at all. `nil` when
    /// nothing it shows changed.
    /// - Complexity: O(*k* log *k*) for *k* changed children.
    package var locationChange: LocationChange? {
        guard case .children = self.old, case .children = self.new else {
            return self.old == self.new ? nil : .put(path: [], node: self.new)
        }
        var shown: [(key: ChildKey, node: Node)] = self.changes.added
        shown.append(contentsOf: self.changes.changed.lazy.map { ($0.key, $0.new) })
        shown.sort { ChildKey.compare($0.key, $1.key) < 0 }
        var members = shown.map { (path: [$0.key], node: $0.node) }
        members.append(contentsOf: self.changes.removed.lazy.map { (path: [$0.key], node: Node.empty) })
        return members.isEmpty ? nil : .patch(path: [], members: members)
    }
}
