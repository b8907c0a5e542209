/// A ``JSONBuilder`` that builds database nodes straight from JSON text, without an intermediate
/// ``JSONValue``: the fast path for importing large files.
///
/// It applies the same rules as ``ValueConverter`` (null members dropped, arrays as integer keys,
/// `.value` and `.priority`) but, building bottom-up, it cannot name the path of a problem. So it
/// throws ``NodeBuilder/Fallback`` for anything unusual (an invalid key, a server value, a huge
/// string), and ``NodeImporter`` then redoes the work on the slow path, which produces the
/// precise error message or resolves the server values.
package struct NodeBuilder: JSONBuilder {
    /// A node plus what the path limits need: the deepest relative path in segments, and the
    /// largest `segments + UTF-8 bytes` of any relative path below it.
    package struct Built {
        package var node: Node
        package var depth: Int
        package var cost: Int
        /// Set for `{".value": …}` and `{".priority": …}` members, and plain leaves.
        var isLeafOnly: Bool
    }

    /// Thrown to request the slow path.
    package struct Fallback: Error {}

    package init() {}

    package func null() -> Built { Built(node: .empty, depth: 0, cost: 0, isLeafOnly: true) }
    package func bool(_ b: Bool) -> Built { Built(node: .leaf(.bool(b)), depth: 0, cost: 0, isLeafOnly: true) }
    package func int(_ i: Int64) -> Built { Built(node: .leaf(.int(i)), depth: 0, cost: 0, isLeafOnly: true) }
    package func double(_ d: Double) -> Built { Built(node: .leaf(.double(d)), depth: 0, cost: 0, isLeafOnly: true) }

    package func string(_ s: String) throws -> Built {
        if s.utf8.count > KeyValidation.maxStringBytes { throw Fallback() }
        return Built(node: .leaf(.string(s)), depth: 0, cost: 0, isLeafOnly: true)
    }

    package func array(_ elements: inout [Built]) -> Built {
        var keys = ContiguousArray<ChildKey>()
        var nodes = ContiguousArray<Node>()
        keys.reserveCapacity(elements.count)
        nodes.reserveCapacity(elements.count)
        var depth = 0
        var cost = 0
        for (i, element) in elements.enumerated() where !element.node.isEmpty {
            let key = ChildKey(String(i))
            keys.append(key)
            nodes.append(element.node)
            depth = max(depth, element.depth + 1)
            cost = max(cost, element.cost + 1 + key.string.utf8.count)
        }
        return Built(node: Self.node(keys, nodes), depth: depth, cost: cost, isLeafOnly: false)
    }

    /// The node with these children (keys strictly ascending, no empty node), built without
    /// copying the arrays (one leaf of the map up to its capacity) or walking the map again.
    private static func node(_ keys: ContiguousArray<ChildKey>, _ nodes: ContiguousArray<Node>) -> Node {
        if keys.isEmpty { return .empty }
        var prioritized = 0
        for node in nodes where node.priority != nil { prioritized += 1 }
        return .children(Node.ChildrenNode(map: SortedMap(sortedKeys: keys, values: nodes), prioritizedChildren: prioritized))
    }

    package func object(_ members: inout [(key: String, value: Built)]) throws -> Built {
        var priority: Built? = nil
        var dotValue: Built? = nil
        // The children in document order; when their keys already ascend (as a tree exported in
        // key order does), these are the map's arrays as they are.
        var keys = ContiguousArray<ChildKey>()
        var nodes = ContiguousArray<Node>()
        keys.reserveCapacity(members.count)
        nodes.reserveCapacity(members.count)
        var ascending = true
        var hasEmpty = false
        var depth = 0
        var cost = 0
        for position in members.indices {
            let key = members[position].key
            switch key {
            case ".priority": priority = members[position].value
            case ".value": dotValue = members[position].value
            default:
                guard KeyValidation.isValidKey(key) else { throw Fallback() }
                let value = members[position].value
                depth = max(depth, value.depth + 1)
                cost = max(cost, value.cost + 1 + key.utf8.count)
                let childKey = ChildKey(key)
                if ascending, let last = keys.last, ChildKey.compare(last, childKey) >= 0 { ascending = false }
                hasEmpty = hasEmpty || value.node.isEmpty
                keys.append(childKey)
                nodes.append(value.node)
            }
        }
        var built: Built
        if let dotValue {
            // Any other member, even a null or empty one, is refused by the exact path.
            guard keys.isEmpty, dotValue.isLeafOnly else { throw Fallback() }
            built = Built(node: dotValue.node, depth: 0, cost: 0, isLeafOnly: true)
        } else if ascending && !hasEmpty {
            built = Built(node: Self.node(keys, nodes), depth: depth, cost: cost, isLeafOnly: false)
        } else {
            // Sort by key, then position, so that among duplicate keys the last one comes last and
            // wins (as JSON.parse does); then drop earlier duplicates and empty values.
            // Members are appended in document order, so sorting positions stably by key keeps
            // duplicates in document order. Small objects use an insertion sort of positions,
            // which moves no keys or nodes.
            var order = Array(keys.indices)
            if keys.count <= 16 {
                for i in 1..<max(1, order.count) {
                    let moving = order[i]
                    var j = i
                    while j > 0 && ChildKey.compare(keys[order[j - 1]], keys[moving]) > 0 {
                        order[j] = order[j - 1]
                        j -= 1
                    }
                    order[j] = moving
                }
            } else {
                order.sort { a, b in
                    let c = ChildKey.compare(keys[a], keys[b])
                    return c != 0 ? c < 0 : a < b
                }
            }
            var sortedKeys = ContiguousArray<ChildKey>()
            var sortedNodes = ContiguousArray<Node>()
            sortedKeys.reserveCapacity(keys.count)
            sortedNodes.reserveCapacity(keys.count)
            for (i, p) in order.enumerated() {
                if i + 1 < order.count && keys[order[i + 1]] == keys[p] { continue }
                if nodes[p].isEmpty { continue }
                sortedKeys.append(keys[p])
                sortedNodes.append(nodes[p])
            }
            built = Built(node: Self.node(sortedKeys, sortedNodes), depth: depth, cost: cost, isLeafOnly: false)
        }
        if let priority {
            switch priority.node {
            case .empty where priority.isLeafOnly: built.node = built.node.withoutPriority  // `null`, not `{}` or `[]`
            case .leaf(.string(let s)): built.node = built.node.withPriority(.string(s))
            case .leaf(.int(let i)): built.node = built.node.withPriority(.int(i))
            case .leaf(.double(let d)): built.node = built.node.withPriority(.double(d))
            default: throw Fallback()  // booleans, objects and server values: slow path
            }
        }
        return built
    }
}

/// Turns JSON text into a validated ``WriteValue`` for a location: the fast ``NodeBuilder`` first,
/// and the exact ``ValueConverter`` path when the fast one declines.
package enum NodeImporter {
    /// - Throws: ``DatabaseError`` `.invalidJSON` for malformed text, or the validation error the
    ///   value would get from `setValue` (naming the offending key, path or value).
    package static func writeValue(fromJSON bytes: UnsafeRawBufferPointer, location: [ChildKey], function: String) throws(DatabaseError)
        -> WriteValue
    {
        var builder = NodeBuilder()
        do {
            if let value = self.writeValue(try JSONParser().parse(bytes, into: &builder), location: location) { return value }
        } catch let error as DatabaseError {
            throw error
        } catch {
            // Fallback requested: redo it precisely below.
        }
        let json: JSONValue
        do {
            var valueBuilder = JSONValueBuilder()
            json = try JSONParser().parse(bytes, into: &valueBuilder)
        } catch let error as DatabaseError {
            throw error
        } catch {
            throw DatabaseError(.invalidJSON, "\(error)")
        }
        var converter = try ValueConverter(function: function, location: location.map(\.string))
        return try converter.convert(json)
    }

    /// What ``NodeBuilder`` built, as the value to write at `location`; `nil` when it is too deep
    /// or its paths too long there (the slow path names the problem).
    package static func writeValue(_ built: NodeBuilder.Built, location: [ChildKey]) -> WriteValue? {
        let locationBytes = location.reduce(0) { $0 + $1.string.utf8.count }
        let fits =
            location.count + built.depth <= KeyValidation.maxDepth
            && (built.depth == 0 ? max(1, location.count) + locationBytes : location.count + locationBytes + built.cost)
                <= KeyValidation.maxPathBytes
        return fits ? WriteValue(node: built.node) : nil
    }
}
