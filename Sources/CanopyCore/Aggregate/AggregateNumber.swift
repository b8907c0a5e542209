/// A number a child contributes to an aggregate (the value of the aggregated field), or none: only
/// numbers count towards sums, averages, minimums and maximums; anything else (missing, a string,
/// a boolean, an object) is ignored by them but still counts towards `count`.
package enum AggregateNumber: Sendable, Hashable {
    case int(Int64)
    case double(Double)

    /// The number at `field` of `child` (its own value when `field` is empty), if it is one.
    @inlinable
    package static func of(_ child: Node, field: [ChildKey]) -> AggregateNumber? {
        switch (field.isEmpty ? child : child.node(at: field)).leafValue {
        case .int(let i)?: return .int(i)
        case .double(let d)?: return .double(d)
        default: return nil
        }
    }

    /// Three-way numeric comparison (an `Int64` and a `Double` compared exactly).
    @inlinable
    package static func compare(_ a: AggregateNumber, _ b: AggregateNumber) -> Int {
        switch (a, b) {
        case (.int(let x), .int(let y)): return NumberComparison.compare(x, y)
        case (.double(let x), .double(let y)): return NumberComparison.compare(x, y)
        case (.int(let x), .double(let y)): return NumberComparison.compare(x, y)
        case (.double(let x), .int(let y)): return -NumberComparison.compare(y, x)
        }
    }

    /// The integer form of an integer-valued double that fits in 64 bits (`3.0` → `3`, `-0.0` →
    /// `0`); any other number as it is.
    package var canonical: AggregateNumber {
        guard case .double(let d) = self, d.rounded(.towardZero) == d, d >= -0x1p63, d < 0x1p63 else { return self }
        return .int(Int64(d))
    }

    package var doubleValue: Double {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        }
    }

    package var leafValue: LeafValue {
        switch self {
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        }
    }
}
