package import CanopyCore

/// The query of a read, as `query.*` shows it to `.read` rules (the DocC article *The Rules Language*, *Variables*): its order, bounds and
/// limits. A read without a query is ``QueryDescription/none`` (ordered by key, no bounds).
package struct QueryDescription: Sendable, Equatable {
    package enum Order: Sendable, Equatable {
        case key
        case value
        case priority
        /// By a child path, e.g. `owner` or `metrics/views`.
        case child(String)
    }

    package var order: Order
    /// `nil` when absent; `.some(nil)` is a bound at `null`.
    package var startAt: LeafValue??
    package var endAt: LeafValue??
    package var equalTo: LeafValue??
    package var limitToFirst: Int?
    package var limitToLast: Int?

    package init(
        order: Order = .priority, startAt: LeafValue?? = nil, endAt: LeafValue?? = nil, equalTo: LeafValue?? = nil,
        limitToFirst: Int? = nil, limitToLast: Int? = nil
    ) {
        self.order = order
        self.startAt = startAt
        self.endAt = endAt
        self.equalTo = equalTo
        self.limitToFirst = limitToFirst
        self.limitToLast = limitToLast
    }

    /// A plain read (no query): what production reports to rules (*The Rules Language*, *Variables*; the expression vectors hold it).
    package static let none = QueryDescription(order: .key)

    /// The description of an engine query.
    package init(_ params: QueryParams) {
        switch params.index {
        case .key: self.order = .key
        case .value: self.order = .value
        case .priority: self.order = .priority
        case .child(let path): self.order = .child(path.map(\.string).joined(separator: "/"))
        }
        func value(_ bound: QueryBound, index: QueryIndex) -> LeafValue? {
            if case .key = index, case .key(let k) = bound.key { return .string(k.string) }
            return bound.value
        }
        // `equalTo(v)` is both bounds at `v`: with a child key, at that key; without one, from
        // before the first child with `v` to after the last (the SDKs send it as startAt + endAt).
        if let start = params.start, let end = params.end, start.inclusive, end.inclusive, start.value == end.value,
            start.key == end.key || (start.key == .min && end.key == .max)
        {
            self.equalTo = .some(value(start, index: params.index))
        } else {
            self.startAt = params.start.map { .some(value($0, index: params.index)) } ?? nil
            self.endAt = params.end.map { .some(value($0, index: params.index)) } ?? nil
        }
        switch params.limit {
        case .first(let n)?: self.limitToFirst = n
        case .last(let n)?: self.limitToLast = n
        case nil: break
        }
    }
}
