/// A JSON value as Canopy reads and writes it.
///
/// `JSONValue` is the typed, `Sendable` counterpart of the Foundation-style values (`[String: Any]`,
/// `NSNumber`, `NSNull`) that the Firebase-shaped API also accepts. Numbers keep integer fidelity:
/// an `Int64` written as ``int(_:)`` reads back as the same `Int64`, while equality compares
/// numbers by value, so `.int(1) == .double(1.0)`, as the Realtime Database does.
///
/// ```swift
/// let post: JSONValue = ["title": "Hello", "starCount": 0, "tags": ["swift", "linux"]]
/// ```
///
/// Arrays are stored as objects with keys `"0"`, `"1"`, …; reading turns such objects back into
/// arrays when most indices are present (see ``DataSnapshot/value``).
public enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue: Equatable {
    /// - Complexity: O(*s*) for values of *s* nodes (arrays and objects are compared element by element).
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.int(let a), .double(let b)), (.double(let b), .int(let a)): return NumberComparison.compare(a, b) == 0
        default: return false
        }
    }
}

extension JSONValue: Hashable {
    /// - Complexity: O(*s*) for a value of *s* nodes.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        // A scalar hashes as the equal leaf value.
        case .bool(let b): LeafValue.bool(b).hash(into: &hasher)
        case .int(let i): LeafValue.int(i).hash(into: &hasher)
        case .double(let d): LeafValue.double(d).hash(into: &hasher)
        case .string(let s): LeafValue.string(s).hash(into: &hasher)
        case .array(let a):
            hasher.combine(4)
            hasher.combine(a)
        case .object(let o):
            hasher.combine(5)
            hasher.combine(o)
        }
    }
}

extension JSONValue: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// - Complexity: O(*m*) for *m* members.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object: [String: JSONValue] = [:]
        object.reserveCapacity(elements.count)
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }
}

extension JSONValue {
    /// Whether this is ``null``.
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// The string, if this is a string.
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }

    /// The boolean, if this is a boolean.
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }

    /// The number as `Int64`, if this is an integer or a double with an exact integer value.
    public var int64Value: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d): return Int64(exactly: d)
        default: return nil
        }
    }

    /// The number as `Double`, if this is a number.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    /// The members, if this is an object.
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { return o } else { return nil } }

    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }

    /// The member named `key`, or `nil` when this is not an object or has no such member.
    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }
}
