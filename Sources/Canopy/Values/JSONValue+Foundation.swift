import Foundation

extension JSONValue {
    /// Converts a Foundation-style value (`[String: Any]`, `[Any]`, `NSNumber`, `NSNull`, `String`,
    /// Swift numbers and booleans, or a `JSONValue`) the way Firebase's `setValue` accepts it.
    ///
    /// - Parameters:
    ///   - value: The value; `nil` and `NSNull` are `null`.
    ///   - function: The API name used in error messages.
    /// - Throws: `DatabaseError` `.invalidValue` for unsupported types and non-string keys.
    ///
    /// - Complexity: O(*s*) for a value of *s* nodes.
    public init(any value: Any?, function: String = "set") throws(DatabaseError) {
        var converter = AnyConverter(prefix: "\(function) failed: value argument ")
        self = try converter.convert(value, path: [])
    }

    /// ``init(any:function:)`` naming `argument` and the written location in error messages.
    init(any value: Any?, function: String, argument: String, location: [String]) throws(DatabaseError) {
        var converter = AnyConverter(prefix: "\(function) failed: \(argument) argument ", location: location)
        self = try converter.convert(value, path: [])
    }

    /// The Foundation form of the value: `NSNull`, `Bool`, `NSNumber`, `String`, `[Any]`,
    /// `[String: Any]`.
    ///
    /// - Complexity: O(*s*) for a value of *s* nodes.
    public var anyValue: Any {
        switch self {
        case .null: return NSNull()
        case .bool(let b): return b
        case .int(let i): return NSNumber(value: i)
        case .double(let d): return NSNumber(value: d)
        case .string(let s): return s
        case .array(let a): return a.map(\.anyValue)
        case .object(let o): return o.mapValues(\.anyValue)
        }
    }
}
