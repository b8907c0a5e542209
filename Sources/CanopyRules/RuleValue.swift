import CanopyCore

/// A value during evaluation (the DocC article *The Rules Language*, *Types and errors*): JavaScript-like primitives, snapshots, untyped `auth`
/// objects, and the opaque `val()` of a non-leaf (equal to nothing).
enum RuleValue: Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case snapshot(RuleDataSnapshot)
    /// An object or array from `auth` (members readable, equal to nothing).
    case json(JSONValue)
    /// The `val()` of a location with children.
    case opaque

    init(_ json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .number(Double(i))
        case .double(let d): self = .number(d)
        case .string(let s): self = .string(s)
        case .array, .object: self = .json(json)
        }
    }

    init(_ leaf: LeafValue?) {
        switch leaf {
        case nil: self = .null
        case .bool(let b)?: self = .bool(b)
        case .int(let i)?: self = .number(Double(i))
        case .double(let d)?: self = .number(d)
        case .string(let s)?: self = .string(s)
        }
    }

    /// `val()` of a node: the primitive, `null`, or an opaque value for a location with children.
    init(val node: Node) {
        switch node {
        case .empty: self = .null
        case .children: self = .opaque
        default: self.init(node.leafValue)
        }
    }

    var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .snapshot: return "RuleDataSnapshot"
        case .json: return "object"
        case .opaque: return "object"
        }
    }

    /// Strict equality (`==` and `===` alike): same type and value, never for objects.
    static func strictlyEqual(_ a: RuleValue, _ b: RuleValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        // Equal UTF-16 code units exactly when equal UTF-8 bytes (both encode the same scalars),
        // compared in place, 8 bytes at a time (not `==`, which compares canonical equivalence).
        case (.string(let x), .string(let y)): return x.utf8.count == y.utf8.count && ChildKey.compareUTF16(x, y) == 0
        default: return false
        }
    }

    /// A number as JavaScript prints it: `0` not `0.0`, `NaN`, `Infinity`.
    static func format(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
        if d == 0 { return "0" }
        if d.rounded() == d && abs(d) < 1e21 {
            if abs(d) < 9.2e18 { return String(Int64(d)) }
        }
        var text = d.description
        // Swift prints 1e-07 where JavaScript prints 1e-7.
        if let e = text.firstIndex(of: "e") {
            var exponent = String(text[text.index(after: e)...])
            var sign = "+"
            if exponent.hasPrefix("-") || exponent.hasPrefix("+") {
                sign = String(exponent.removeFirst())
            }
            while exponent.hasPrefix("0") && exponent.count > 1 { exponent.removeFirst() }
            text = String(text[..<e]) + "e" + sign + exponent
        }
        return text
    }
}
