/// A live aggregate: a location, a query and an ``AggregateRequest``, told after each write that
/// changes the aggregate's value (and only then) what the value is now.
///
/// Registered with ``SyncEngine/listen(_:)-(AggregateListener)`` on the loop thread. As with
/// ``ViewListener``, the engine never calls `onChange` itself: it queues an ``AggregateChange``
/// and whoever applied the write takes them with ``SyncEngine/takeAggregateChanges(into:)``.
package final class AggregateListener {
    package let path: DatabasePath
    package let params: QueryParams
    package let request: AggregateRequest
    package let onChange: (AggregateResult) -> Void
    // Unchecked exclusivity: touched only on the engine's thread, never re-entrantly.
    /// The indexes it reads, one per field; set while registered.
    @exclusivity(unchecked) var indexes: [AggregateIndex] = []
    /// Its range in each index, kept up to date by the index; empty when the query has a limit
    /// (the value is then read from the indexes' trees after each write).
    @exclusivity(unchecked) var ranges: [AggregateRange] = []
    /// The value last reported.
    @exclusivity(unchecked) package internal(set) var value: AggregateResult?

    package init(path: DatabasePath, params: QueryParams, request: AggregateRequest, onChange: @escaping (AggregateResult) -> Void) {
        self.path = path
        self.params = params
        self.request = request
        self.onChange = onChange
    }

    /// The value now, from the live indexes: O(1) per field for a tracked range (O(log *n*) now
    /// and then, see ``AggregateIndex/summary(of:)``), else O(log *n*).
    func compute() -> AggregateResult {
        guard !self.ranges.isEmpty else {
            return AggregateResult(request: self.request, summaries: self.indexes.map { $0.summary(self.params) })
        }
        // One field (the common case): no array of summaries.
        if self.ranges.count == 1 { return AggregateResult(request: self.request, summary: self.indexes[0].summary(of: self.ranges[0])) }
        return AggregateResult(request: self.request, summaries: zip(self.indexes, self.ranges).map { $0.summary(of: $1) })
    }

    /// Whether a write may have changed the value: false only when no child entered or left any
    /// of its tracked ranges. Resets the ranges' change marks.
    func takeMayHaveChanged() -> Bool {
        guard !self.ranges.isEmpty else { return true }
        var changed = false
        for range in self.ranges where range.takeChanged() { changed = true }
        return changed
    }
}

/// A new value of a live aggregate, for its listener.
package struct AggregateChange {
    package let listener: AggregateListener
    package let value: AggregateResult

    /// Calls the listener.
    package func deliver() { self.listener.onChange(self.value) }
}
