import Canopy
import Foundation

/// A query as the oracle understands it, written from the range table in *Queries*, *Query
/// windows*, not from the engine.
struct OracleQuery: Equatable, CustomStringConvertible {
    enum Index: Equatable {
        case priority, key, value
        case child([String])
    }

    struct Endpoint: Equatable {
        var value: JSONValue
        var key: String?
        var exclusive: Bool
    }

    var index: Index = .priority
    var start: Endpoint?
    var end: Endpoint?
    var limit: (first: Bool, n: Int)?

    static func == (a: OracleQuery, b: OracleQuery) -> Bool {
        a.index == b.index && a.start == b.start && a.end == b.end && a.limit?.first == b.limit?.first && a.limit?.n == b.limit?.n
    }

    var isFiltered: Bool { self.start != nil || self.end != nil || self.limit != nil }

    var description: String {
        var parts: [String] = []
        switch self.index {
        case .priority: break
        case .key: parts.append("orderByKey")
        case .value: parts.append("orderByValue")
        case .child(let p): parts.append("orderByChild(\(p.joined(separator: "/")))")
        }
        if let s = self.start { parts.append("\(s.exclusive ? "startAfter" : "startAt")(\(s.value.jsonString()),\(s.key ?? "-"))") }
        if let e = self.end { parts.append("\(e.exclusive ? "endBefore" : "endAt")(\(e.value.jsonString()),\(e.key ?? "-"))") }
        if let l = self.limit { parts.append("\(l.first ? "limitToFirst" : "limitToLast")(\(l.n))") }
        return parts.joined(separator: ".")
    }

    /// Applies the query to a reference with the public API.
    func apply(to ref: DatabaseReference) -> DatabaseQuery {
        var q: DatabaseQuery = ref
        switch self.index {
        case .priority: break
        case .key: q = q.queryOrderedByKey()
        case .value: q = q.queryOrderedByValue()
        case .child(let p): q = q.queryOrdered(byChild: p.joined(separator: "/"))
        }
        if let s = self.start {
            q =
                s.exclusive
                ? q.queryStarting(afterValue: s.value.anyValue, childKey: s.key)
                : q.queryStarting(atValue: s.value.anyValue, childKey: s.key)
        }
        if let e = self.end {
            q =
                e.exclusive
                ? q.queryEnding(beforeValue: e.value.anyValue, childKey: e.key) : q.queryEnding(atValue: e.value.anyValue, childKey: e.key)
        }
        if let l = self.limit { q = l.first ? q.queryLimited(toFirst: UInt(l.n)) : q.queryLimited(toLast: UInt(l.n)) }
        return q
    }

    // MARK: - Brute force

    func sortValue(_ node: ModelNode) -> JSONValue? {
        switch self.index {
        case .priority: return node.priority
        case .key: return nil
        case .value: return node.export
        case .child(let path):
            var current: ModelNode? = node
            for k in path { current = current?.children[k] }
            return current?.export
        }
    }

    /// Value order on export-format JSON: null, false, true, numbers, strings, objects.
    static func compareValues(_ a: JSONValue?, _ b: JSONValue?) -> Int {
        func rank(_ v: JSONValue?) -> Int {
            switch v {
            case nil, .null?: return 0
            case .bool(false)?: return 1
            case .bool(true)?: return 2
            case .int?, .double?: return 3
            case .string?: return 4
            case .object(let o)? where o[".value"] != nil: return rank(o[".value"])
            default: return 5
            }
        }
        let ra = rank(a)
        let rb = rank(b)
        if ra != rb { return ra < rb ? -1 : 1 }
        func unwrap(_ v: JSONValue?) -> JSONValue? {
            if case .object(let o)? = v, let inner = o[".value"] { return inner }
            return v
        }
        let x = unwrap(a)
        let y = unwrap(b)
        if let dx = x?.doubleValue, let dy = y?.doubleValue { return dx < dy ? -1 : (dx > dy ? 1 : 0) }
        if let sx = x?.stringValue, let sy = y?.stringValue {
            return sx == sy ? 0 : (Array(sx.utf16).lexicographicallyPrecedes(sy.utf16) ? -1 : 1)
        }
        return 0
    }

    func less(_ a: (key: String, value: ModelNode), _ b: (key: String, value: ModelNode)) -> Bool {
        let c = Self.compareValues(self.sortValue(a.value), self.sortValue(b.value))
        return c != 0 ? c < 0 : oracleKeyLess(a.key, b.key)
    }

    private func keyCompare(_ a: String, _ b: String) -> Int { a == b ? 0 : (oracleKeyLess(a, b) ? -1 : 1) }

    /// Whether a child is within the range, straight from the range table (a key bound only
    /// matters among equal index values).
    func inRange(_ key: String, _ node: ModelNode) -> Bool {
        if self.index == .key {
            if let s = self.start, case .string(let k) = s.value {
                let c = self.keyCompare(key, k)
                if s.exclusive ? c <= 0 : c < 0 { return false }
            }
            if let e = self.end, case .string(let k) = e.value {
                let c = self.keyCompare(key, k)
                if e.exclusive ? c >= 0 : c > 0 { return false }
            }
            return true
        }
        let v = self.sortValue(node)
        if let s = self.start {
            let c = Self.compareValues(v, s.value)
            if c < 0 { return false }
            if c == 0 {
                if let k = s.key {
                    let ck = self.keyCompare(key, k)
                    if s.exclusive ? ck <= 0 : ck < 0 { return false }
                } else if s.exclusive {
                    return false
                }
            }
        }
        if let e = self.end {
            let c = Self.compareValues(v, e.value)
            if c > 0 { return false }
            if c == 0 {
                if let k = e.key {
                    let ck = self.keyCompare(key, k)
                    if e.exclusive ? ck >= 0 : ck > 0 { return false }
                } else if e.exclusive {
                    return false
                }
            }
        }
        return true
    }

    /// The children the query shows, in its order.
    func window(_ node: ModelNode?) -> [(key: String, value: ModelNode)] {
        var list = (node?.children ?? [:]).map { (key: $0.key, value: $0.value) }.sorted(by: self.less)
        list = list.filter { self.inRange($0.key, $0.value) }
        if let l = self.limit { list = l.first ? Array(list.prefix(l.n)) : Array(list.suffix(l.n)) }
        return list
    }

    /// The node a `value` event shows: the whole node, or for filtered queries the window's
    /// children without the location's priority.
    func viewNode(_ node: ModelNode?) -> ModelNode? {
        guard self.isFiltered else { return node }
        let children = Dictionary(uniqueKeysWithValues: self.window(node).map { ($0.key, $0.value) })
        return children.isEmpty ? nil : .object(children, priority: nil)
    }

    /// Whether a changed child counts as moved for this order: never by key, any priority change
    /// by priority, any change by value, a different indexed value by child.
    func isMove(_ old: ModelNode, _ new: ModelNode) -> Bool {
        switch self.index {
        case .key: return false
        case .priority: return old.priority != new.priority
        case .value: return old != new
        case .child: return Self.compareValues(self.sortValue(old), self.sortValue(new)) != 0
        }
    }
}
