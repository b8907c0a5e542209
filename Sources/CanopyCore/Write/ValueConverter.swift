/// Turns a ``JSONValue`` into a validated ``WriteValue`` with the Realtime Database's rules and
/// messages (see *Ordering and Keys*, "Keys and paths"): keys, `.value` / `.priority` / `.sv`, NaN
/// and Infinity, depth (32), path length (768 UTF-8 bytes) and string size (10 MiB).
package struct ValueConverter {
    /// `"set failed: value argument "`, the prefix of every message.
    package let prefix: String
    private var parts: [String]
    private var relative: [ChildKey] = []
    private var byteLength: Int
    private var placeholders: [WriteValue.Placeholder] = []

    /// - Parameters:
    ///   - function: The API name used in messages (`set`, `update`, `transaction`, …).
    ///   - argument: The argument name used in messages (`value`, `values`).
    ///   - location: Where the value is written (its segments count toward depth and length).
    package init(function: String, argument: String = "value", location: [String]) throws(DatabaseError) {
        self.prefix = "\(function) failed: \(argument) argument "
        self.parts = location
        self.byteLength = max(1, location.count) + location.reduce(0) { $0 + $1.utf8.count }
        try self.checkPath()
    }

    /// Converts `value`; the converter can be used once per value.
    package mutating func convert(_ value: JSONValue) throws(DatabaseError) -> WriteValue {
        let node = try self.node(from: value)
        return WriteValue(node: node, placeholders: self.placeholders)
    }

    /// Validates a priority argument (`setPriority`, `setValue(_:andPriority:)`).
    package static func priority(_ value: JSONValue, function: String) throws(DatabaseError) -> PriorityArgument {
        switch value {
        case .null: return .none
        case .string(let s): return .value(.string(s))
        case .int(let i): return .value(.int(i))
        case .double(let d):
            if d.isNaN {
                throw DatabaseError(
                    .invalidPriority,
                    "\(function) failed: priority argument is NaN, but must be a valid Firebase priority (a string, finite number, server value, or null)."
                )
            }
            if d.isFinite { return .value(.double(d)) }
        case .object(let o):
            if o.count == 1, let sv = o[".sv"], let placeholder = ServerValuePlaceholder(sv) { return .serverValue(placeholder) }
        default: break
        }
        throw DatabaseError(
            .invalidPriority,
            "\(function) failed: priority argument must be a valid Firebase priority (a string, finite number, server value, or null).")
    }

    /// A validated priority argument.
    package enum PriorityArgument: Sendable, Equatable {
        case none
        case value(LeafValue)
        case serverValue(ServerValuePlaceholder)
    }

    // MARK: - Conversion

    private var property: String {
        self.parts.isEmpty ? "" : " at /\(self.parts.joined(separator: "/"))"
    }

    private func checkPath() throws(DatabaseError) {
        if self.byteLength > KeyValidation.maxPathBytes {
            throw DatabaseError(
                .invalidValue, "\(self.prefix)has a key path longer than \(KeyValidation.maxPathBytes) bytes (\(self.byteLength)).")
        }
        if self.parts.count > KeyValidation.maxDepth {
            throw DatabaseError(
                .invalidValue,
                "\(self.prefix)path specified exceeds the maximum depth that can be written (\(KeyValidation.maxDepth)) or object contains a cycle\(self.property)"
            )
        }
    }

    private mutating func push(_ key: String) throws(DatabaseError) {
        if !self.parts.isEmpty { self.byteLength += 1 }
        self.parts.append(key)
        self.relative.append(ChildKey(key))
        self.byteLength += key.utf8.count
        try self.checkPath()
    }

    private mutating func pop() {
        let key = self.parts.removeLast()
        self.relative.removeLast()
        self.byteLength -= key.utf8.count
        if !self.parts.isEmpty { self.byteLength -= 1 }
    }

    private func leaf(_ value: JSONValue) throws(DatabaseError) -> LeafValue? {
        switch value {
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d):
            if d.isNaN { throw DatabaseError(.invalidValue, "\(self.prefix)contains NaN\(self.property)") }
            if !d.isFinite { throw DatabaseError(.invalidValue, "\(self.prefix)contains Infinity\(self.property)") }
            return .double(d)
        case .string(let s):
            if s.utf8.count > KeyValidation.maxStringBytes {
                throw DatabaseError(
                    .invalidValue,
                    "\(self.prefix)contains a string greater than \(KeyValidation.maxStringBytes) utf8 bytes\(self.property) ('\(s.prefix(50))...')"
                )
            }
            return .string(s)
        default: return nil
        }
    }

    private mutating func node(from value: JSONValue) throws(DatabaseError) -> Node {
        switch value {
        case .null: return .empty
        case .array(let elements):
            var keys: [ChildKey] = []
            var nodes: [Node] = []
            for (i, element) in elements.enumerated() {
                let key = String(i)
                try self.push(key)
                let child = try self.node(from: element)
                self.pop()
                if !child.isEmpty {
                    keys.append(ChildKey(key))
                    nodes.append(child)
                }
            }
            return Node.from(children: SortedMap(sortedKeys: keys, values: nodes))
        case .object(let members):
            return try self.object(members)
        default:
            return .leaf(try self.leaf(value)!)
        }
    }

    private mutating func object(_ members: [String: JSONValue]) throws(DatabaseError) -> Node {
        if let sv = members[".sv"] {
            guard members.count == 1 else {
                throw DatabaseError(
                    .invalidValue,
                    "\(self.prefix)contains \".sv\" together with other keys\(self.property). Server values cannot be stored with other keys."
                )
            }
            guard let placeholder = ServerValuePlaceholder(sv) else {
                throw DatabaseError(
                    .invalidValue,
                    "\(self.prefix)contains an invalid server value\(self.property). Use {\".sv\": \"timestamp\"} or {\".sv\": {\"increment\": number}}."
                )
            }
            self.placeholders.append(.init(path: self.relative, value: placeholder, isPriority: false))
            return .leaf(.int(0))
        }
        var pairs: [(key: ChildKey, node: Node)] = []
        pairs.reserveCapacity(members.count)
        var dotValue: JSONValue? = nil
        var hasActualChild = false
        // Sorted, so that a value with several problems always reports the same one.
        for (key, member) in members.sorted(by: { $0.key < $1.key }) {
            switch key {
            case ".value": dotValue = member
            case ".priority": continue
            default:
                hasActualChild = true
                guard KeyValidation.isValidKey(key) else {
                    throw DatabaseError(
                        .invalidKey,
                        "\(self.prefix)contains an invalid key (\(key))\(self.property). Keys must be non-empty strings and can't contain \".\", \"#\", \"$\", \"/\", \"[\", or \"]\""
                    )
                }
                try self.push(key)
                let child = try self.node(from: member)
                self.pop()
                if !child.isEmpty { pairs.append((ChildKey(key), child)) }
            }
        }
        var node: Node
        if let dotValue {
            if hasActualChild {
                throw DatabaseError(
                    .invalidValue, "\(self.prefix)contains \".value\" child\(self.property) in addition to actual children.")
            }
            switch dotValue {
            case .null: node = .empty
            case .object, .array:
                throw DatabaseError(
                    .invalidValue,
                    "\(self.prefix)contains an invalid \".value\"\(self.property). Only a string, number, boolean or null can be used with .value."
                )
            default: node = .leaf(try self.leaf(dotValue)!)
            }
        } else {
            pairs.sort { ChildKey.compare($0.key, $1.key) < 0 }
            node = Node.from(children: SortedMap(sortedKeys: pairs.lazy.map(\.key), values: pairs.lazy.map(\.node)))
        }
        if let priorityJSON = members[".priority"] {
            node = try self.applyPriority(priorityJSON, to: node)
        }
        return node
    }

    private mutating func applyPriority(_ json: JSONValue, to node: Node) throws(DatabaseError) -> Node {
        let invalid = DatabaseError(
            .invalidPriority,
            "\(self.prefix)contains an invalid value for '\(([""] + self.parts + [".priority"]).joined(separator: "/"))', which must be a valid Firebase priority (a string, finite number, server value, or null)."
        )
        switch json {
        case .null: return node.withoutPriority
        case .string(let s): return node.withPriority(.string(s))
        case .int(let i): return node.withPriority(.int(i))
        case .double(let d):
            guard d.isFinite else { throw invalid }
            return node.withPriority(.double(d))
        case .object(let o):
            guard o.count == 1, let sv = o[".sv"], let placeholder = ServerValuePlaceholder(sv) else { throw invalid }
            if node.isEmpty { return node }
            self.placeholders.append(.init(path: self.relative, value: placeholder, isPriority: true))
            return node.withPriority(.int(0))
        default:
            throw invalid
        }
    }
}
