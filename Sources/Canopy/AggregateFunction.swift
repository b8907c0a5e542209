import CanopyCore

/// One value an ``AggregateQuery`` computes over the children in its query's range.
///
/// A field is a child path, as in `queryOrdered(byChild:)` (`"rating"`, `"stats/rating"`), or
/// `"$value"` for the child's own value. Only numbers count towards `sum`, `average`, `min` and
/// `max`: children whose field is missing, a string, a boolean or an object are skipped by them,
/// while `count` counts every child in range.
public enum AggregateFunction: Sendable, Hashable, CustomStringConvertible {
    /// The number of children in range.
    case count
    /// The sum of the field's numbers: an integer while every one is an integer and the sum fits
    /// in 64 bits, else a double; 0 when there are none.
    case sum(String)
    /// The mean of the field's numbers, a double; null when there are none.
    case average(String)
    /// The smallest of the field's numbers; null when there are none.
    case min(String)
    /// The largest of the field's numbers; null when there are none.
    case max(String)

    /// The name of the value in results and JSON: `count`, `sum(rating)`, `avg(rating)`,
    /// `min(rating)`, `max(rating)`.
    public var description: String {
        switch self {
        case .count: return "count"
        case .sum(let f): return "sum(\(f))"
        case .average(let f): return "avg(\(f))"
        case .min(let f): return "min(\(f))"
        case .max(let f): return "max(\(f))"
        }
    }

    /// The engine's term, validated.
    func term() throws(DatabaseError) -> AggregateRequest.Term {
        switch self {
        case .count: return .count
        case .sum(let f): return try .of(.sum, f)
        case .average(let f): return try .of(.average, f)
        case .min(let f): return try .of(.min, f)
        case .max(let f): return try .of(.max, f)
        }
    }
}
