import CanopyCore

/// Values stored at locations of the tree, found by the writes that touch them: a write at `p`
/// reaches the locations on the way from the root to `p` (its ancestors and `p`) and, for each
/// path it writes below `p`, the locations on and below that path.
struct LocationTrie<Value> {
    private final class Entry {
        var value: Value?
        var children: [ChildKey: Entry] = [:]
    }

    private let root = Entry()
    private(set) var count = 0

    /// The value at `location`.
    subscript(location: DatabasePath) -> Value? {
        var entry = self.root
        for key in location.keys {
            guard let next = entry.children[key] else { return nil }
            entry = next
        }
        return entry.value
    }

    /// Stores (or, with `nil`, removes) the value at `location`.
    /// - Complexity: O(*d*) for a location at depth *d*.
    mutating func set(_ value: Value?, at location: DatabasePath) {
        var path: [(Entry, ChildKey)] = []
        var entry = self.root
        for key in location.keys {
            if let next = entry.children[key] {
                path.append((entry, key))
                entry = next
            } else {
                guard value != nil else { return }
                let next = Entry()
                entry.children[key] = next
                path.append((entry, key))
                entry = next
            }
        }
        if entry.value == nil && value != nil { self.count += 1 }
        if entry.value != nil && value == nil { self.count -= 1 }
        entry.value = value
        // Prune entries left with neither a value nor children.
        while let (parent, key) = path.last, let child = parent.children[key], child.value == nil, child.children.isEmpty {
            parent.children[key] = nil
            path.removeLast()
        }
    }

    /// Calls `body` with each stored location a write at `path` (to the relative `entries`, `[]`
    /// for a set) can change, and its value, each once: the locations from the root down to `path`,
    /// and those on the way to each written entry and below it.
    /// - Complexity: O(*e* · *d*) for *e* entries at depth *d*, plus the locations found.
    func forEachTouched(by path: DatabasePath, entries: [[ChildKey]], _ body: (DatabasePath, Value) -> Void) {
        var entry = self.root
        var location: [ChildKey] = []
        if let value = entry.value { body(DatabasePath(location), value) }
        for key in path.keys {
            guard let next = entry.children[key] else { return }
            entry = next
            location.append(key)
            if let value = entry.value { body(DatabasePath(location), value) }
        }
        var visited = Set<[ChildKey]>()
        for relative in entries {
            var node = entry
            var at = location
            var reached = true
            for key in relative {
                guard let next = node.children[key] else {
                    reached = false
                    break
                }
                node = next
                at.append(key)
                if let value = node.value, visited.insert(at).inserted { body(DatabasePath(at), value) }
            }
            if reached { Self.forEachDescendant(of: node, at: at, visited: &visited, body) }
        }
    }

    /// Every stored location and its value.
    func forEach(_ body: (DatabasePath, Value) -> Void) {
        if let value = self.root.value { body(.root, value) }
        var visited = Set<[ChildKey]>()
        Self.forEachDescendant(of: self.root, at: [], visited: &visited, body)
    }

    private static func forEachDescendant(
        of entry: Entry, at location: [ChildKey], visited: inout Set<[ChildKey]>, _ body: (DatabasePath, Value) -> Void
    ) {
        for (key, child) in entry.children {
            let at = location + [key]
            if let value = child.value, visited.insert(at).inserted { body(DatabasePath(at), value) }
            Self.forEachDescendant(of: child, at: at, visited: &visited, body)
        }
    }
}
