extension Node {
    /// The plain value (Firebase's `val()`): no priorities, and children nodes that look like
    /// arrays (every key a canonical non-negative integer, the largest below twice the child
    /// count) as arrays with `null` holes. An empty node is `.null`.
    package var plainJSON: JSONValue {
        switch self {
        case .empty: return .null
        case .leaf(let v): return v.jsonValue
        case .prioritizedLeaf(let p): return p.value.jsonValue
        case .children(let c):
            if let length = Node.arrayLength(c.map) {
                var array = [JSONValue](repeating: .null, count: length)
                for (key, child) in c.map { array[Int(key.integer)] = child.plainJSON }
                return .array(array)
            }
            var object: [String: JSONValue] = [:]
            object.reserveCapacity(c.map.count)
            for (key, child) in c.map { object[key.string] = child.plainJSON }
            return .object(object)
        }
    }

    /// The export value (Firebase's `exportVal()`): priorities as `.priority`, leaves with a
    /// priority as `{".value": v, ".priority": p}`, never arrays.
    package var exportJSON: JSONValue {
        switch self {
        case .empty: return .null
        case .leaf(let v): return v.jsonValue
        case .prioritizedLeaf(let p): return .object([".value": p.value.jsonValue, ".priority": p.priority.jsonValue])
        case .children(let c):
            var object: [String: JSONValue] = [:]
            object.reserveCapacity(c.map.count + 1)
            for (key, child) in c.map { object[key.string] = child.exportJSON }
            if let priority = c.priority { object[".priority"] = priority.jsonValue }
            return .object(object)
        }
    }

    /// The array length when `map` reads back as an array: every key a canonical non-negative
    /// integer (`0` or no leading zero) and the largest below twice the number of children.
    package static func arrayLength(_ map: SortedMap<ChildKey, Node>) -> Int? {
        guard let last = map.last, last.key.isInteger, last.key.integer >= 0 else { return nil }
        let maxKey = Int(last.key.integer)
        guard maxKey < 2 * map.count else { return nil }
        for (key, _) in map {
            guard key.isInteger, key.integer >= 0, key.isCanonicalInteger else { return nil }
        }
        return maxKey + 1
    }
}

extension ChildKey {
    /// `"0"` or digits without a leading zero (and no sign).
    package var isCanonicalInteger: Bool {
        guard self.isInteger, self.integer >= 0 else { return false }
        let utf8 = self.string.utf8
        guard let first = utf8.first, first != UInt8(ascii: "-") else { return false }
        return first != UInt8(ascii: "0") || utf8.count == 1
    }
}
