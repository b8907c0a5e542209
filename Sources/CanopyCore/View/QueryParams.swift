/// What a view shows of its location: the order of its children and, optionally, a range of
/// positions and a limit (see the Queries article). Two views with equal parameters at one location are one view.
package struct QueryParams: Sendable, Hashable {
    /// A limit on the number of children, counted from the start or from the end of the range.
    package enum Limit: Sendable, Hashable {
        case first(Int)
        case last(Int)
    }

    package var index: QueryIndex
    package var start: QueryBound?
    package var end: QueryBound?
    package var limit: Limit?

    package init(index: QueryIndex = .priority, start: QueryBound? = nil, end: QueryBound? = nil, limit: Limit? = nil) {
        self.index = index
        self.start = start
        self.end = end
        self.limit = limit
    }

    /// The default query: every child, in priority order.
    package static let `default` = QueryParams()

    /// Whether the view shows a subset of the children (a range or a limit). A filtered view shows
    /// only children: never the location's priority, and nothing when the location is a leaf.
    package var isFiltered: Bool { self.start != nil || self.end != nil || self.limit != nil }

    /// Whether `entry` lies inside the range (limits aside).
    package func inRange(_ entry: IndexEntry) -> Bool {
        if let start, start.excludesAsStart(entry) { return false }
        if let end, !end.includesAsEnd(entry) { return false }
        return true
    }
}
