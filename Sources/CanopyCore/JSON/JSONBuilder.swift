/// Receives the values ``JSONParser`` reads and builds a tree of its own kind from them.
///
/// The parser calls the scalar methods for each leaf and ``object(_:)`` / ``array(_:)`` once a
/// container is complete, children first (post-order), so a builder never sees a partial tree.
///
/// The container methods get the parser's scratch buffer `inout`: the builder reads it (or moves
/// its contents out), and the parser empties it afterwards with `removeAll(keepingCapacity: true)`
/// to reuse the capacity for the next container at the same depth. Copying the elements into an
/// exactly sized array (as ``JSONValueBuilder`` does) keeps the scratch buffer unique, so parsing
/// does not reallocate it.
package protocol JSONBuilder {
    /// The node type the builder produces.
    associatedtype Value

    /// Builds `null`.
    mutating func null() throws -> Value
    /// Builds `true` or `false`.
    mutating func bool(_ b: Bool) throws -> Value
    /// Builds an integer literal that fits `Int64` (no fraction, no exponent).
    mutating func int(_ i: Int64) throws -> Value
    /// Builds any other number: finite, correctly rounded.
    mutating func double(_ d: Double) throws -> Value
    /// Builds a string (escapes already decoded, valid Unicode).
    mutating func string(_ s: String) throws -> Value
    /// Builds an object from its members in document order.
    ///
    /// The parser passes duplicate keys as they appear; the builder resolves them, and should
    /// keep the last one as `JSON.parse` does.
    mutating func object(_ members: inout [(key: String, value: Value)]) throws -> Value
    /// Builds an array from its elements in document order.
    mutating func array(_ elements: inout [Value]) throws -> Value
}

/// A ``JSONBuilder`` producing ``JSONValue``. Duplicate object keys: the last one wins.
package struct JSONValueBuilder: JSONBuilder {
    /// Creates a builder; it holds no state.
    package init() {}

    package func null() -> JSONValue { .null }
    package func bool(_ b: Bool) -> JSONValue { .bool(b) }
    package func int(_ i: Int64) -> JSONValue { .int(i) }
    package func double(_ d: Double) -> JSONValue { .double(d) }
    package func string(_ s: String) -> JSONValue { .string(s) }

    package func object(_ members: inout [(key: String, value: JSONValue)]) -> JSONValue {
        var object = [String: JSONValue](minimumCapacity: members.count)
        for member in members { object[member.key] = member.value }
        return .object(object)
    }

    package func array(_ elements: inout [JSONValue]) -> JSONValue {
        // An exact-size copy: the parser's scratch buffer stays unique and keeps its capacity.
        .array(elements.withUnsafeBufferPointer { Array($0) })
    }
}

extension JSONValue {
    /// Parses a JSON text (RFC 8259, strict).
    ///
    /// Integer literals that fit `Int64` become ``int(_:)``, other numbers ``double(_:)``;
    /// duplicate object keys keep the last value.
    ///
    /// ```swift
    /// let value = try JSONValue(parsing: #"{"title": "Hello", "stars": 3}"#)
    /// ```
    ///
    /// - Throws: ``DatabaseError`` with code ``DatabaseError/Code/invalidJSON`` whose message
    ///   names the problem and its line, column and byte offset.
    ///
    /// - Complexity: O(*b*) for a text of *b* UTF-8 bytes.
    public init(parsing text: String) throws {
        var builder = JSONValueBuilder()
        self = try JSONParser().parse(text, into: &builder)
    }

    /// Parses a JSON text given as UTF-8 bytes (RFC 8259, strict); see `init(parsing:)` taking a `String`.
    ///
    /// - Throws: ``DatabaseError`` with code ``DatabaseError/Code/invalidJSON``.
    ///
    /// - Complexity: O(*b*) for *b* bytes.
    public init(parsing bytes: [UInt8]) throws {
        var builder = JSONValueBuilder()
        self = try JSONParser().parse(bytes, into: &builder)
    }

    /// The JSON text of this value, with object keys sorted so the output is deterministic.
    ///
    /// Compact by default; `pretty` indents by two spaces and writes `"key": value`. Numbers are
    /// written as JavaScript's `JSON.stringify` writes them (`5.0` → `5`, `1e21` → `1e+21`).
    ///
    /// ```swift
    /// let value: JSONValue = ["b": 1, "a": [true, nil]]
    /// value.jsonString()  // {"a":[true,null],"b":1}
    /// ```
    ///
    /// - Complexity: O(*s*) for a value of *s* nodes, plus O(*m* log *m*) to sort the keys of each object of
    ///   *m* members.
    public func jsonString(pretty: Bool = false) -> String {
        JSONWriter.string(self, options: pretty ? [.pretty, .sortedKeys] : [.sortedKeys])
    }
}
