/// The value of an aggregate query now: for each term of its ``AggregateRequest``, a number or
/// null.
///
/// - `count`: the children in the query's range (after its limit, if any).
/// - `sum(f)`: the sum of the numeric values of field `f` (0 when there are none): an integer
///   while every one is an integer and the sum fits in 64 bits, else a double.
/// - `avg(f)`: their mean, a double; null when there are none.
/// - `min(f)`, `max(f)`: the smallest and largest; an integer when integer-valued (so `3` and
///   `3.0` give the same result), else a double; null when none.
///
/// Two results are the same value when their numbers are equal as numbers (``sameValue(as:)``):
/// observers are called on a change of value, never on a change of form alone.
package struct AggregateResult: Sendable, Equatable {
    package let request: AggregateRequest
    /// One per term, in the request's order; `nil` is null.
    package let values: [AggregateNumber?]
    /// The children in the range, asked for or not.
    package let count: Int

    /// The result of `request` given the summary of the range for each of its fields (in the
    /// order of ``AggregateRequest/fields``).
    package init(request: AggregateRequest, summaries: [AggregateSummary]) {
        self.request = request
        self.count = summaries.first?.count ?? 0
        self.values = zip(request.terms, request.fieldOfTerm).map { term, field in Self.value(of: term, in: summaries[field]) }
    }

    /// The result of `request`, which has a single field, given that field's summary (no array
    /// of summaries to build).
    package init(request: AggregateRequest, summary: AggregateSummary) {
        precondition(request.fields.count == 1, "AggregateResult(request:summary:) needs a request of one field")
        self.request = request
        self.count = summary.count
        self.values = request.terms.map { Self.value(of: $0, in: summary) }
    }

    private static func value(of term: AggregateRequest.Term, in summary: AggregateSummary) -> AggregateNumber? {
        switch term.function {
        case .count: return .int(Int64(summary.count))
        case .sum: return summary.sum
        case .average: return summary.average.map(AggregateNumber.double)
        case .min: return summary.min.map(\.canonical)
        case .max: return summary.max.map(\.canonical)
        }
    }

    /// Whether the two values are the same, number by number compared as numbers (`6` and `6.0`
    /// are the same; the request is not compared).
    package func sameValue(as other: AggregateResult) -> Bool {
        guard self.count == other.count, self.values.count == other.values.count else { return false }
        return zip(self.values, other.values).allSatisfy { a, b in
            switch (a, b) {
            case (nil, nil): return true
            case (let x?, let y?): return AggregateNumber.compare(x, y) == 0
            default: return false
            }
        }
    }

    /// The value of `term`, `nil` when null or not asked.
    package func value(of term: AggregateRequest.Term) -> AggregateNumber? {
        guard let i = self.request.terms.firstIndex(of: term) else { return nil }
        return self.values[i]
    }

    /// The JSON object of the result: each term's name (`count`, `sum(stars)`…) to its value.
    package var json: JSONValue {
        var object: [String: JSONValue] = [:]
        for (term, value) in zip(self.request.terms, self.values) {
            switch value {
            case .int(let i)?: object[term.name] = .int(i)
            case .double(let d)?: object[term.name] = .double(d)
            case nil: object[term.name] = .null
            }
        }
        return .object(object)
    }

    /// The result as a node (a null term is left out, as a null child is absent).
    package var node: Node {
        var node = Node.empty
        for (term, value) in zip(self.request.terms, self.values) {
            if let value { node.setChild(ChildKey(term.name), to: .leaf(value.leafValue)) }
        }
        return node
    }
}
