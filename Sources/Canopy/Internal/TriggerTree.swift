import CanopyCore
import Synchronization

/// One registered trigger.
// @unchecked Sendable: `handler` is called only on the loop thread (documented on every
// `onValue…` API); the other stored properties are immutable or atomic.
final class TriggerEntry: @unchecked Sendable {
    let id: UInt64
    let kind: TriggerKind
    let pattern: TriggerPattern
    let handler: (TriggerEvent) throws -> Void
    /// Weak: a trigger does not keep its database open (the database holds its triggers).
    weak let database: Database?
    /// Set by `remove()` on any thread: the handler is not called again, even for a write whose
    /// triggers are being run.
    let removed = Atomic<Bool>(false)

    init(id: UInt64, kind: TriggerKind, pattern: TriggerPattern, database: Database, handler: @escaping (TriggerEvent) throws -> Void) {
        self.id = id
        self.kind = kind
        self.pattern = pattern
        self.database = database
        self.handler = handler
    }
}

/// The triggers by pattern, as a trie of keys and wildcards, so a write finds the triggers it
/// fires by walking its own paths: O(*d*) per written path (times the wildcard branches that exist),
/// never a scan of every trigger. Loop thread only.
final class TriggerTree {
    private final class TrieNode {
        // Unchecked exclusivity: the trie is touched only on the loop thread, and no access to a
        // property spans a call that could access it again, so the dynamic checks (two or three per
        // node visited by every write's walk) cannot fail.
        @exclusivity(unchecked) var literals: [ChildKey: TrieNode] = [:]
        @exclusivity(unchecked) var wildcard: TrieNode?
        @exclusivity(unchecked) var triggers: [TriggerEntry] = []
        /// Triggers here and below.
        @exclusivity(unchecked) var count = 0
    }

    private let root = TrieNode()

    var isEmpty: Bool { self.root.count == 0 }

    func add(_ entry: TriggerEntry) {
        var node = self.root
        node.count += 1
        for segment in entry.pattern.segments {
            switch segment {
            case .key(let key):
                let next = node.literals[key] ?? TrieNode()
                node.literals[key] = next
                node = next
            case .wildcard:
                let next = node.wildcard ?? TrieNode()
                node.wildcard = next
                node = next
            }
            node.count += 1
        }
        node.triggers.append(entry)
    }

    func remove(_ entry: TriggerEntry) {
        var path: [TrieNode] = [self.root]
        for segment in entry.pattern.segments {
            let node = path[path.count - 1]
            let next: TrieNode?
            switch segment {
            case .key(let key): next = node.literals[key]
            case .wildcard: next = node.wildcard
            }
            guard let next else { return }
            path.append(next)
        }
        guard let index = path[path.count - 1].triggers.firstIndex(where: { $0 === entry }) else { return }
        path[path.count - 1].triggers.remove(at: index)
        for node in path { node.count -= 1 }
        // Drop the highest node left empty (and with it those below).
        guard let depth = entry.pattern.segments.indices.first(where: { path[$0 + 1].count == 0 }) else { return }
        switch entry.pattern.segments[depth] {
        case .key(let key): path[depth].literals[key] = nil
        case .wildcard: path[depth].wildcard = nil
        }
    }

    func removeAll() -> [TriggerEntry] {
        var all: [TriggerEntry] = []
        func walk(_ node: TrieNode) {
            all.append(contentsOf: node.triggers)
            for child in node.literals.values { walk(child) }
            if let wildcard = node.wildcard { walk(wildcard) }
        }
        walk(self.root)
        self.root.literals = [:]
        self.root.wildcard = nil
        self.root.triggers = []
        self.root.count = 0
        return all
    }

    /// How triggers watch what a change at a path changes.
    enum Watch: Comparable {
        /// No trigger's location is at, above or below the path.
        case none
        /// Some trigger's location is at or below it, none above.
        case atOrBelow
        /// Some trigger's location is above it.
        case above
    }

    /// How triggers watch the changes at `base` followed by each of `paths`, the most watched: the
    /// trie is walked along `base` once, then along each path from where that walk ended.
    ///
    /// - Complexity: O(*d*) per path and wildcard branch that exists along it.
    func watch(_ base: [ChildKey], _ paths: some Sequence<ArraySlice<ChildKey>>) -> Watch {
        // The trie nodes at the depth of `base`; a trigger above it is above every path.
        var reached: [TrieNode] = []
        func walk(_ node: TrieNode, _ depth: Int) -> Bool {
            guard node.count > 0 else { return false }
            if depth == base.count {
                reached.append(node)
                return false
            }
            if !node.triggers.isEmpty { return true }
            if let next = node.literals[base[depth]], walk(next, depth + 1) { return true }
            if let next = node.wildcard, walk(next, depth + 1) { return true }
            return false
        }
        if walk(self.root, 0) { return .above }
        guard !reached.isEmpty else { return .none }
        var watch = Watch.none
        for path in paths {
            func visit(_ node: TrieNode, _ depth: Int) -> Watch {
                guard node.count > 0 else { return .none }
                if depth == path.count { return .atOrBelow }
                if !node.triggers.isEmpty { return .above }
                let literal = node.literals[path[path.startIndex + depth]].map { visit($0, depth + 1) } ?? .none
                if literal == .above { return .above }
                return max(literal, node.wildcard.map { visit($0, depth + 1) } ?? .none)
            }
            for node in reached {
                watch = max(watch, visit(node, 0))
                if watch == .above { return .above }
            }
        }
        return watch
    }

    /// The triggers a change at `path` fires, with their locations: those at or above it, and those
    /// below it whose location's data differs between `before` and `after` (the trees before and
    /// after the write; `old` and `new` are their nodes at `path`). `visit` is called once per
    /// trigger and location found, with the location's old and new nodes when they are at hand.
    ///
    /// - Complexity: O(*d*) per wildcard branch along the path, plus, below it, O(*c* log *n*) for the *c*
    ///   children written or removed at each wildcard level (proportional to the write).
    func matches(_ path: [ChildKey], old: Node, new: Node, visit: (TriggerEntry, [ChildKey], (old: Node, new: Node)?) -> Void) {
        func along(_ node: TrieNode, _ depth: Int) {
            guard node.count > 0 else { return }
            if depth == path.count {
                for entry in node.triggers { visit(entry, path, (old, new)) }
                self.below(node, path, before: old, after: new, visit: visit)
                return
            }
            if !node.triggers.isEmpty {
                let location = Array(path[..<depth])
                for entry in node.triggers { visit(entry, location, nil) }
            }
            if let next = node.literals[path[depth]] { along(next, depth + 1) }
            if let next = node.wildcard { along(next, depth + 1) }
        }
        along(self.root, 0)
    }

    /// Triggers strictly below a written location, where its data changed.
    private func below(
        _ node: TrieNode, _ location: [ChildKey], before: Node, after: Node,
        visit: (TriggerEntry, [ChildKey], (old: Node, new: Node)?) -> Void
    ) {
        func descend(_ next: TrieNode, _ key: ChildKey) {
            let old = before.child(key)
            let new = after.child(key)
            guard old != new else { return }
            let childLocation = location + [key]
            for entry in next.triggers { visit(entry, childLocation, (old, new)) }
            self.below(next, childLocation, before: old, after: new, visit: visit)
        }
        for (key, next) in node.literals where next.count > 0 { descend(next, key) }
        guard let wildcard = node.wildcard, wildcard.count > 0 else { return }
        for (key, _) in after.childMap { descend(wildcard, key) }
        for (key, _) in before.childMap where after.child(key).isEmpty { descend(wildcard, key) }
    }
}
