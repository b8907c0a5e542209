/// A leaf of the tree: boolean, number (`Int64` or `Double`, compared by value) or string.
///
/// Also the representation of priorities (numbers and strings only).
package enum LeafValue: Sendable {
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)

    /// Rank of the type in value order (null < booleans < numbers < strings < objects; see
    /// *Ordering and Keys*): booleans, numbers, strings.
    @inlinable
    var typeRank: Int {
        switch self {
        case .bool: return 1
        case .int, .double: return 2
        case .string: return 3
        }
    }

    /// Three-way comparison in value order: false < true < numbers (by value) < strings (UTF-16).
    @inlinable
    package static func compare(_ a: LeafValue, _ b: LeafValue) -> Int {
        switch (a, b) {
        case (.int(let x), .int(let y)): return NumberComparison.compare(x, y)
        case (.double(let x), .double(let y)): return NumberComparison.compare(x, y)
        case (.int(let x), .double(let y)): return NumberComparison.compare(x, y)
        case (.double(let x), .int(let y)): return -NumberComparison.compare(y, x)
        case (.string(let x), .string(let y)): return ChildKey.compareUTF16(x, y)
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (x ? 1 : -1)
        default:
            let ra = a.typeRank
            let rb = b.typeRank
            return ra < rb ? -1 : (ra > rb ? 1 : 0)
        }
    }

    /// The number as a `Double`, if this is a number.
    package var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    package var isNumber: Bool {
        switch self {
        case .int, .double: return true
        default: return false
        }
    }

    package var jsonValue: JSONValue {
        switch self {
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        }
    }
}

extension LeafValue: Equatable {
    /// Value equality: numbers compare by value (`.int(1) == .double(1.0)`).
    @inlinable
    package static func == (lhs: LeafValue, rhs: LeafValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let x), .string(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.bool(let x), .bool(let y)): return x == y
        default:
            return lhs.typeRank == rhs.typeRank && LeafValue.compare(lhs, rhs) == 0
        }
    }
}

extension LeafValue: CustomStringConvertible {
    package var description: String {
        switch self {
        case .bool(let b): return b.description
        case .int(let i): return i.description
        case .double(let d): return d.description
        case .string(let s): return "\"\(s)\""
        }
    }
}

extension LeafValue: Hashable {
    /// Equal values hash alike: numbers hash by their `Double` value when it is exact.
    package func hash(into hasher: inout Hasher) {
        switch self {
        case .bool(let b):
            hasher.combine(1)
            hasher.combine(b)
        case .int(let i): NumberComparison.hash(i, into: &hasher)
        case .double(let d): NumberComparison.hash(d, into: &hasher)
        case .string(let s):
            hasher.combine(3)
            hasher.combine(s)
        }
    }
}
