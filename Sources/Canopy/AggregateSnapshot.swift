import CanopyCore

/// The value of an ``AggregateQuery`` at one moment: one number (or null) per function asked.
///
/// ```swift
/// let stats = try await ratings.queryOrdered(byChild: "stars").queryStarting(atValue: 3)
///     .aggregate(.count, .average("stars")).getData()
/// print(stats.count, stats.average("stars") ?? 0)
/// ```
public struct AggregateSnapshot: Sendable, Equatable, CustomStringConvertible {
    /// The functions, in the order asked (repeats removed).
    public let functions: [AggregateFunction]
    /// The number of children in the query's range (after its limit), whether or not `.count`
    /// was asked.
    public let count: Int
    /// The result's values, one per term of the request (shared with it, not copied).
    private let numbers: [AggregateNumber?]
    /// For each function, its term in ``numbers`` (shared with the query).
    private let terms: [Int]

    /// The snapshot of `query`'s result: O(1), it shares the result's values.
    init(_ query: AggregateQuery, result: AggregateResult) {
        self.functions = query.distinct.functions
        self.count = result.count
        self.numbers = result.values
        self.terms = query.distinct.terms
    }

    /// The value of the `i`th function.
    private func value(_ i: Int) -> JSONValue {
        switch self.numbers[self.terms[i]] {
        case .int(let n)?: return .int(n)
        case .double(let d)?: return .double(d)
        case nil: return .null
        }
    }

    /// The values, in the order of ``functions``.
    private var values: [JSONValue] { self.functions.indices.map(self.value) }

    /// The value of `function`: `.int`, `.double` or `.null`; `nil` when it was not asked.
    public subscript(_ function: AggregateFunction) -> JSONValue? {
        guard let i = self.functions.firstIndex(of: function) else { return nil }
        return self.value(i)
    }

    /// Equal when the functions, the count and every value are.
    public static func == (a: AggregateSnapshot, b: AggregateSnapshot) -> Bool {
        a.functions == b.functions && a.count == b.count && a.functions.indices.allSatisfy { a.value($0) == b.value($0) }
    }

    private func number(_ function: AggregateFunction) -> Double? {
        switch self[function] {
        case .int(let i)?: return Double(i)
        case .double(let d)?: return d
        default: return nil
        }
    }

    /// The sum of `field` (0 when no child has a number there); `nil` when not asked.
    public func sum(_ field: String) -> Double? { self.number(.sum(field)) }

    /// The sum of `field` exactly, when every number there is an integer and the sum fits in an
    /// `Int64`; else (or when not asked) `nil`.
    public func integerSum(_ field: String) -> Int64? {
        if case .int(let i)? = self[.sum(field)] { return i }
        return nil
    }

    /// The mean of `field`; `nil` when no child has a number there, or when not asked.
    public func average(_ field: String) -> Double? { self.number(.average(field)) }

    /// The smallest number at `field`; `nil` when there is none, or when not asked.
    public func min(_ field: String) -> Double? { self.number(.min(field)) }

    /// The largest number at `field`; `nil` when there is none, or when not asked.
    public func max(_ field: String) -> Double? { self.number(.max(field)) }

    /// The snapshot as a JSON object: each function's name (``AggregateFunction/description``,
    /// such as `sum(rating)`) to its value, as the REST API returns it.
    public var json: JSONValue {
        .object(Dictionary(uniqueKeysWithValues: zip(self.functions.map(\.description), self.values)))
    }

    public var description: String { self.json.jsonString() }
}
