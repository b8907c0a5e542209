/// What a view shows of its location: the order of its children (and, with queries, a window).
package struct QueryParams: Sendable, Hashable {
    package var index: QueryIndex

    package init(index: QueryIndex = .priority) {
        self.index = index
    }

    /// The default query: every child, in priority order.
    package static let `default` = QueryParams()
}
