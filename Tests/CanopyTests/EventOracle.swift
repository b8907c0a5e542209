import Canopy
import Foundation

/// A brute-force model of the database for tests: plain dictionaries, no sharing, no indexes.
/// Events are computed by diffing whole trees, independently of the engine.
indirect enum ModelNode: Equatable {
    case leaf(JSONValue, priority: JSONValue?)
    case object([String: ModelNode], priority: JSONValue?)

    var priority: JSONValue? {
        switch self {
        case .leaf(_, let p), .object(_, let p): return p
        }
    }

    var children: [String: ModelNode] {
        if case .object(let c, _) = self { return c }
        return [:]
    }

    func withPriority(_ p: JSONValue?) -> ModelNode {
        switch self {
        case .leaf(let v, _): return .leaf(v, priority: p)
        case .object(let c, _): return .object(c, priority: p)
        }
    }

    /// Export format, as `DataSnapshot.exportJSON` gives it.
    var export: JSONValue {
        switch self {
        case .leaf(let v, nil): return v
        case .leaf(let v, let p?): return [".value": v, ".priority": p]
        case .object(let c, let p):
            var o = c.mapValues(\.export)
            if let p { o[".priority"] = p }
            return .object(o)
        }
    }

    /// Builds a model node from an export-format JSON value (nil for empty).
    static func from(_ json: JSONValue) -> ModelNode? {
        switch json {
        case .null: return nil
        case .object(var o):
            let rawPriority = o.removeValue(forKey: ".priority")
            let priority: JSONValue? = rawPriority == JSONValue.null ? nil : rawPriority
            if let v = o[".value"] { return from(v)?.withPriority(priority) }
            var children: [String: ModelNode] = [:]
            for (k, v) in o { if let child = from(v) { children[k] = child } }
            return children.isEmpty ? nil : .object(children, priority: priority)
        case .array(let a):
            var children: [String: ModelNode] = [:]
            for (i, v) in a.enumerated() { if let child = from(v) { children[String(i)] = child } }
            return children.isEmpty ? nil : .object(children, priority: nil)
        default: return .leaf(json, priority: nil)
        }
    }
}

/// Brute-force key order (integer keys first by value, shorter first on a tie, then strings by
/// UTF-16 code units), written independently of the engine's `ChildKey`.
func oracleKeyLess(_ a: String, _ b: String) -> Bool {
    func int(_ s: String) -> Int64? {
        guard s.range(of: #"^-?0*\d{1,10}$"#, options: .regularExpression) != nil, let v = Int64(s) else { return nil }
        return v >= Int64(Int32.min) && v <= Int64(Int32.max) ? v : nil
    }
    switch (int(a), int(b)) {
    case (let x?, let y?):
        return x != y ? x < y : (a.count != b.count ? a.count < b.count : Array(a.utf16).lexicographicallyPrecedes(b.utf16))
    case (_?, nil): return true
    case (nil, _?): return false
    default: return Array(a.utf16).lexicographicallyPrecedes(b.utf16)
    }
}

/// Brute-force priority order then key (the default order).
func oracleChildLess(_ a: (String, ModelNode), _ b: (String, ModelNode)) -> Bool {
    func rank(_ p: JSONValue?) -> Int {
        switch p {
        case nil, .null?: return 0
        case .int?, .double?: return 1
        default: return 2
        }
    }
    let pa = a.1.priority
    let pb = b.1.priority
    if rank(pa) != rank(pb) { return rank(pa) < rank(pb) }
    switch (pa, pb) {
    case (let x?, let y?) where x != y:
        if let dx = x.doubleValue, let dy = y.doubleValue { return dx < dy }
        if let sx = x.stringValue, let sy = y.stringValue { return Array(sx.utf16).lexicographicallyPrecedes(sy.utf16) }
    default: break
    }
    return oracleKeyLess(a.0, b.0)
}

/// The tree of the model database, with writes applied as *Events* and *Ordering and Keys*
/// describe (no empty objects, priorities drop with their node).
struct ModelTree {
    var root: ModelNode? = nil

    func node(at path: [String]) -> ModelNode? {
        var node = self.root
        for key in path { node = node?.children[key] }
        return node
    }

    mutating func set(_ value: ModelNode?, at path: [String]) {
        self.root = Self.set(value, in: self.root, at: path[...])
    }

    private static func set(_ value: ModelNode?, in node: ModelNode?, at path: ArraySlice<String>) -> ModelNode? {
        guard let key = path.first else { return value }
        let existing = node?.children[key]
        let child = set(value, in: existing, at: path.dropFirst())
        // Removing what is not there (even under a leaf) changes nothing.
        if child == nil && existing == nil { return node }
        var children = node?.children ?? [:]
        let priority = node?.priority
        children[key] = child
        if children.isEmpty { return nil }
        return .object(children, priority: priority)
    }
}

/// One recorded callback, comparable between the engine and the oracle.
struct RecordedEvent: Equatable, CustomStringConvertible {
    var listener: Int
    var type: DataEventType
    var key: String?
    var previous: String?
    var value: JSONValue

    var description: String {
        "L\(self.listener) \(self.type) \(self.key ?? "/") prev=\(self.previous ?? "nil") \(self.value.jsonString())"
    }
}

/// Computes the events a write raises for listeners, by diffing whole trees per view.
struct EventOracle {
    struct Listener {
        var id: Int
        var path: [String]
        var type: DataEventType
        var query = OracleQuery()
    }

    /// Listeners in registration order.
    private(set) var listeners: [Listener] = []
    /// Views, (path, query), in creation order: a view is created by its first listener and
    /// lives until its last listener is removed (spec addendum).
    private(set) var views: [(path: [String], query: OracleQuery)] = []

    mutating func add(_ listener: Listener) {
        self.listeners.append(listener)
        if !self.views.contains(where: { $0.path == listener.path && $0.query == listener.query }) {
            self.views.append((listener.path, listener.query))
        }
    }

    mutating func remove(id: Int) {
        guard let i = self.listeners.firstIndex(where: { $0.id == id }) else { return }
        let removed = self.listeners.remove(at: i)
        if !self.listeners.contains(where: { $0.path == removed.path && $0.query == removed.query }) {
            self.views.removeAll { $0.path == removed.path && $0.query == removed.query }
        }
    }

    /// Initial events of a new listener: child_added per child in order, then value (see *Events*).
    func initialEvents(_ listener: Listener, tree: ModelTree) -> [RecordedEvent] {
        let node = tree.node(at: listener.path)
        switch listener.type {
        case .value:
            return [
                RecordedEvent(
                    listener: listener.id, type: .value, key: listener.path.last, previous: nil,
                    value: listener.query.viewNode(node)?.export ?? .null)
            ]
        case .childAdded:
            let sorted = listener.query.window(node)
            return sorted.enumerated().map { i, child in
                RecordedEvent(
                    listener: listener.id, type: .childAdded, key: child.key, previous: i == 0 ? nil : sorted[i - 1].key,
                    value: child.value.export)
            }
        default:
            return []
        }
    }

    /// Events for a write at `written`, going from `old` to `new`: removed, added, moved, changed,
    /// value per view; views below the write first, then at it, then ancestors (see *Events*).
    func events(written: [String], old: ModelTree, new: ModelTree) -> [RecordedEvent] {
        var locations: [[String]] = []
        for v in self.views where !locations.contains(v.path) { locations.append(v.path) }
        func isPrefix(_ a: [String], _ b: [String]) -> Bool { a.count <= b.count && Array(b.prefix(a.count)) == a }
        let below = locations.filter { $0.count > written.count && isPrefix(written, $0) }
            .sorted { a, b in
                // Post-order, siblings by plain string (UTF-16) order of the segment.
                for (x, y) in zip(a, b) where x != y { return Array(x.utf16).lexicographicallyPrecedes(y.utf16) }
                return a.count > b.count
            }
        let at = locations.filter { $0 == written }
        let above = locations.filter { $0.count < written.count && isPrefix($0, written) }.sorted { $0.count > $1.count }
        var result: [RecordedEvent] = []
        for location in below + at + above {
            for view in self.views where view.path == location {
                result += self.viewEvents(view.path, view.query, old: old.node(at: location), new: new.node(at: location))
            }
        }
        return result
    }

    private func viewEvents(_ location: [String], _ query: OracleQuery, old: ModelNode?, new: ModelNode?) -> [RecordedEvent] {
        let oldView = query.viewNode(old)
        let newView = query.viewNode(new)
        guard oldView != newView else { return [] }
        let here = self.listeners.filter { $0.path == location && $0.query == query }
        let oldChildren = oldView?.children ?? [:]
        let newChildren = newView?.children ?? [:]
        let newSorted = newChildren.map { (key: $0.key, value: $0.value) }.sorted(by: query.less)
        func previous(_ key: String) -> String? {
            guard let i = newSorted.firstIndex(where: { $0.key == key }), i > 0 else { return nil }
            return newSorted[i - 1].key
        }
        let removed = oldChildren.filter { newChildren[$0.key] == nil }.map { (key: $0.key, value: $0.value) }.sorted(by: query.less)
        let added = newChildren.filter { oldChildren[$0.key] == nil }.map { (key: $0.key, value: $0.value) }.sorted(by: query.less)
        let changed = newChildren.filter { k, v in oldChildren[k].map { $0 != v } ?? false }.map { (key: $0.key, value: $0.value) }.sorted(
            by: query.less)
        let moved = changed.filter { query.isMove(oldChildren[$0.key]!, $0.value) }
        var result: [RecordedEvent] = []
        func emit(_ type: DataEventType, _ list: [(key: String, value: ModelNode)], withPrevious: Bool) {
            for child in list {
                for l in here where l.type == type {
                    result.append(
                        RecordedEvent(
                            listener: l.id, type: type, key: child.key, previous: withPrevious ? previous(child.key) : nil,
                            value: child.value.export))
                }
            }
        }
        emit(.childRemoved, removed, withPrevious: false)
        emit(.childAdded, added, withPrevious: true)
        emit(.childMoved, moved, withPrevious: true)
        emit(.childChanged, changed, withPrevious: true)
        for l in here where l.type == .value {
            result.append(RecordedEvent(listener: l.id, type: .value, key: location.last, previous: nil, value: newView?.export ?? .null))
        }
        return result
    }
}
