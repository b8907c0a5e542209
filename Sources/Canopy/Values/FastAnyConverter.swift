import CanopyCore
import Foundation

/// Converts a Foundation-style value straight to a ``Node`` in one pass, for the common types
/// (`String`, `Int`, `Bool`, finite `Double`, `Int64`, `[String: Any]`, `[Any]`, `NSNull`,
/// `JSONValue`) and plain keys. Anything else (other types, server values, `.value`,
/// `.priority`, invalid keys or values, limits exceeded) throws ``ConversionFallback`` so that the
/// exact path (`JSONValue(any:)` then `ValueConverter`) converts it or names the problem; where
/// both apply they build the same node.
struct FastAnyConverter: FastNodeConverting {
    var budget: PathBudget

    mutating func node(_ value: Any?) throws(ConversionFallback) -> Node {
        guard let value else { return .empty }
        return try self.node(value)
    }

    mutating func node(_ value: Any) throws(ConversionFallback) -> Node {
        // Opening the existential gives its type without a dynamic cast or type lookup.
        func dispatch<Contained>(_ contained: Contained) throws(ConversionFallback) -> Node { try self.node(opened: contained) }
        return try _openExistential(value, do: dispatch)
    }

    /// Dispatches on the exact type, the most common first; the bit casts are between identical
    /// types. Generic metatypes are looked up once (each lookup is a runtime call).
    private mutating func node<T>(opened value: T) throws(ConversionFallback) -> Node {
        let type = ObjectIdentifier(T.self)
        if type == Self.stringType { return try FastValueConverter.string(unsafeBitCast(value, to: String.self)) }
        if type == Self.intType { return .leaf(.int(Int64(unsafeBitCast(value, to: Int.self)))) }
        if type == Self.objectType { return try self.objectNode(unsafeBitCast(value, to: [String: Any].self)) }
        if type == Self.boolType { return .leaf(.bool(unsafeBitCast(value, to: Bool.self))) }
        if type == Self.doubleType { return try FastValueConverter.double(unsafeBitCast(value, to: Double.self)) }
        if type == Self.int64Type { return .leaf(.int(unsafeBitCast(value, to: Int64.self))) }
        if type == Self.arrayType { return try self.arrayNode(unsafeBitCast(value, to: [Any].self)) }
        if type == Self.nullType { return .empty }
        if type == Self.jsonType {
            var inner = FastValueConverter(budget: self.budget)
            return try inner.node(unsafeBitCast(value, to: JSONValue.self))
        }
        throw ConversionFallback()
    }

    private static let stringType = ObjectIdentifier(String.self)
    private static let intType = ObjectIdentifier(Int.self)
    private static let objectType = ObjectIdentifier([String: Any].self)
    private static let boolType = ObjectIdentifier(Bool.self)
    private static let doubleType = ObjectIdentifier(Double.self)
    private static let int64Type = ObjectIdentifier(Int64.self)
    private static let arrayType = ObjectIdentifier([Any].self)
    private static let nullType = ObjectIdentifier(NSNull.self)
    private static let jsonType = ObjectIdentifier(JSONValue.self)

    /// The string in an `AnyHashable` (a dictionary key), if it holds one.
    static func string(_ key: AnyHashable) -> String? {
        func cast<T>(_ value: T) -> String? { ObjectIdentifier(T.self) == Self.stringType ? unsafeBitCast(value, to: String.self) : nil }
        return _openExistential(key.base, do: cast)
    }
}
