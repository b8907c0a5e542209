/// A live aggregate: a location, a query and an ``AggregateRequest``, told after each write that
/// changes the aggregate's value (and only then) what the value is now.
///
/// Registered with ``SyncEngine/listen(_:)-(AggregateListener)`` on the loop thread. As with
/// ``ViewListener``, the engine never calls `onChange` itself: it queues an ``AggregateChange``
/// and whoever applied the write takes them with ``SyncEngine/takeAggregateChanges()``.
package final class AggregateListener {
    package let path: DatabasePath
    package let params: QueryParams
    package let request: AggregateRequest
    package let onChange: (AggregateResult) -> Void
    /// The indexes it reads, one per field; set while registered.
    var indexes: [AggregateIndex] = []
    /// The value last reported.
    package internal(set) var value: AggregateResult?

    package init(path: DatabasePath, params: QueryParams, request: AggregateRequest, onChange: @escaping (AggregateResult) -> Void) {
        self.path = path
        self.params = params
        self.request = request
        self.onChange = onChange
    }

    /// The value now, from the live indexes: O(log *n*) per field.
    func compute() -> AggregateResult {
        AggregateResult(request: self.request, summaries: self.indexes.map { $0.summary(self.params) })
    }
}

/// A new value of a live aggregate, for its listener.
package struct AggregateChange {
    package let listener: AggregateListener
    package let value: AggregateResult

    /// Calls the listener.
    package func deliver() { self.listener.onChange(self.value) }
}
