/// Thrown by the fast conversions when a value needs the exact path (``ValueConverter``): anything
/// invalid (which the exact path then names precisely) and anything unusual (server values,
/// `.value`, `.priority`, unsupported types).
package struct ConversionFallback: Error {
    @inlinable package init() {}
}

/// The depth (segments) and the UTF-8 bytes of the keys of the path being converted, checked
/// against the same limits as ``ValueConverter`` (depth ≤ 32, `/`-joined path ≤ 768 bytes) but
/// with two integers instead of a list of segments.
package struct PathBudget: Sendable {
    @usableFromInline var depth: Int
    @usableFromInline var keyBytes: Int

    /// The budget at `location` (the segments of the written location).
    @inlinable
    package init(location: [ChildKey]) {
        self.depth = location.count
        self.keyBytes = 0
        for key in location { self.keyBytes &+= key.string.utf8.count }
    }

    /// Whether the location itself is within the limits.
    @inlinable
    package var fits: Bool {
        self.depth <= KeyValidation.maxDepth && Swift.max(1, self.depth) &+ self.keyBytes <= KeyValidation.maxPathBytes
    }

    /// Descends into a key of `bytes` UTF-8 bytes; throws when the path gets too deep or too long.
    @inlinable
    package mutating func push(_ bytes: Int) throws(ConversionFallback) {
        self.depth &+= 1
        self.keyBytes &+= bytes
        // With at least one segment the path is `depth` slashes plus the key bytes.
        if self.depth > KeyValidation.maxDepth || self.depth &+ self.keyBytes > KeyValidation.maxPathBytes { throw ConversionFallback() }
    }

    @inlinable
    package mutating func pop(_ bytes: Int) {
        self.depth &-= 1
        self.keyBytes &-= bytes
    }
}

/// The fast path of ``ValueConverter`` for plain values (no server values, `.value` or
/// `.priority`): one pass, no property path, no intermediate arrays. It accepts exactly the values
/// the exact path accepts without placeholders and builds the same nodes; for anything else it
/// throws ``ConversionFallback``.
package struct FastValueConverter: FastNodeConverting {
    package var budget: PathBudget

    @inlinable
    package init(budget: PathBudget) { self.budget = budget }

    /// The node for `value`.
    package mutating func node(_ value: JSONValue) throws(ConversionFallback) -> Node {
        switch value {
        case .null: return .empty
        case .bool(let b): return .leaf(.bool(b))
        case .int(let i): return .leaf(.int(i))
        case .double(let d): return try Self.double(d)
        case .string(let s): return try Self.string(s)
        case .array(let elements): return try self.arrayNode(elements)
        case .object(let members): return try self.objectNode(members)
        }
    }

    /// A string leaf, if within the size limit.
    @inlinable
    package static func string(_ s: String) throws(ConversionFallback) -> Node {
        guard s.utf8.count <= KeyValidation.maxStringBytes else { throw ConversionFallback() }
        return .leaf(.string(s))
    }

    /// A number leaf, if finite.
    @inlinable
    package static func double(_ d: Double) throws(ConversionFallback) -> Node {
        guard d.isFinite else { throw ConversionFallback() }
        return .leaf(.double(d))
    }
}

/// A one-pass converter of plain values to nodes (``FastValueConverter`` for ``JSONValue``, the
/// Foundation-value one in `Canopy`): both convert objects and arrays member by member here.
package protocol FastNodeConverting {
    associatedtype Value
    var budget: PathBudget { get set }
    /// The node for `value`.
    mutating func node(_ value: Value) throws(ConversionFallback) -> Node
}

extension FastNodeConverting {
    /// The node of an object: each member converted under its key, empty ones left out.
    @inlinable
    package mutating func objectNode(_ members: [String: Value]) throws(ConversionFallback) -> Node {
        var builder = ChildrenBuilder(capacity: members.count)
        for (name, member) in members {
            // Rejects `.sv`, `.value` and `.priority` too: they are for the exact path.
            guard let key = ChildKey(validating: name) else { throw ConversionFallback() }
            let bytes = name.utf8.count
            try self.budget.push(bytes)
            let child = try self.node(member)
            self.budget.pop(bytes)
            if !child.isEmpty { builder.append(key, child) }
        }
        return builder.build()
    }

    /// The node of an array: each element converted under its index, empty ones left out.
    @inlinable
    package mutating func arrayNode(_ elements: [Value]) throws(ConversionFallback) -> Node {
        var builder = ChildrenBuilder(capacity: elements.count)
        for (i, element) in elements.enumerated() {
            let key = ChildKey(index: i)
            let bytes = key.string.utf8.count
            try self.budget.push(bytes)
            let child = try self.node(element)
            self.budget.pop(bytes)
            if !child.isEmpty { builder.append(key, child) }
        }
        return builder.buildSorted()
    }
}

extension ValueConverter {
    /// Converts `value` for a write at `location`: the fast path when it applies, else the exact
    /// one (which names the problem, or resolves server values and `.value` / `.priority`).
    /// - Throws: ``DatabaseError`` as ``convert(_:)`` does.
    package static func writeValue(_ value: JSONValue, at location: [ChildKey], function: String, argument: String = "value")
        throws(DatabaseError) -> WriteValue
    {
        let budget = PathBudget(location: location)
        if budget.fits {
            var fast = FastValueConverter(budget: budget)
            if let node = try? fast.node(value) { return WriteValue(node: node) }
        }
        var converter = try ValueConverter(function: function, argument: argument, location: location.map(\.string))
        return try converter.convert(value)
    }
}
