import CanopyCore

/// Aggregates (count, sum, average, minimum, maximum) over the children in a query's range,
/// read once or observed live. Made by ``DatabaseQuery/aggregate(_:)-([AggregateFunction])``.
///
/// A live aggregate keeps, for its location, order and field, the children in order with a
/// summary per subtree, so each write costs O(log *n*) per changed child and the new value is
/// combined from O(log *n*) summaries (or, for a range without a limit, kept up to date in O(1)
/// per changed child): never a re-scan. Observers are called only when the
/// value changes. See the Live Aggregates article.
public final class AggregateQuery: Sendable {
    /// The query whose range is aggregated.
    public let query: DatabaseQuery
    /// The functions, in the order asked.
    public let functions: [AggregateFunction]
    let request: AggregateRequest?
    /// For each of `functions`, the index of its term in the request.
    let termOfFunction: [Int]
    /// `functions` without repeats, with the index of each one's term in the request: what a
    /// snapshot holds.
    let distinct: (functions: [AggregateFunction], terms: [Int])
    /// An invalid query or function, reported when used.
    let error: DatabaseError?

    init(query: DatabaseQuery, functions: [AggregateFunction]) {
        self.query = query
        self.functions = functions
        var failure = query.constraintError
        var request: AggregateRequest?
        var terms: [AggregateRequest.Term] = []
        do throws(DatabaseError) {
            for function in functions { terms.append(try function.term()) }
            request = try AggregateRequest(terms)
        } catch {
            if failure == nil { failure = error }
        }
        self.request = request
        self.termOfFunction = request.map { request in terms.map { request.terms.firstIndex(of: $0) ?? 0 } } ?? []
        var seen = Set<AggregateFunction>()
        var distinct: (functions: [AggregateFunction], terms: [Int]) = ([], [])
        for (function, term) in zip(functions, self.termOfFunction) where seen.insert(function).inserted {
            distinct.functions.append(function)
            distinct.terms.append(term)
        }
        self.distinct = distinct
        self.error = failure
    }

    var core: DatabaseCore { self.query.core }

    /// Reads the aggregate once.
    ///
    /// - Complexity: O(log *n*) per field on the loop when the same aggregate's indexes are live
    ///   (an observer of the same location, order and field), else O(*n* log *n*) to build them
    ///   for this read.
    public func getData() async throws -> AggregateSnapshot {
        guard let request = self.request, self.error == nil else { throw self.error! }
        let query = self.query
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<AggregateSnapshot, any Error>) in
            let accepted = self.core.read { engine in
                let result = engine.aggregate(at: query.path, params: query.params, request: request)
                continuation.resume(returning: AggregateSnapshot(self, result: result))
            }
            if !accepted { continuation.resume(throwing: DatabaseCore.closedError) }
        }
    }

    /// Reads the aggregate once; `completion` runs on the loop thread.
    ///
    /// - Complexity: As ``getData()``.
    public func getData(completion: @escaping ((any Error)?, AggregateSnapshot?) -> Void) {
        let callback = LoopCallback(completion)
        guard let request = self.request, self.error == nil else {
            let error = self.error!
            if !self.core.perform({ callback.value(error, nil) }) { callback.value(error, nil) }
            return
        }
        let query = self.query
        let accepted = self.core.read { engine in
            let result = engine.aggregate(at: query.path, params: query.params, request: request)
            callback.value(nil, AggregateSnapshot(self, result: result))
        }
        if !accepted { callback.value(DatabaseCore.closedError, nil) }
    }

    /// Observes the aggregate: `block` runs on the loop thread with the current value, then after
    /// every write that changes it (and only then).
    ///
    /// - Returns: A handle for ``removeObserver(withHandle:)``.
    /// - Complexity: O(*n* log *n*) per field to build the aggregate's indexes when no other live
    ///   aggregate shares them, then O(log *n*) per changed child of each write at or above the location.
    @discardableResult
    public func observe(with block: @escaping (AggregateSnapshot) -> Void) -> DatabaseHandle {
        self.observe(with: block, withCancel: nil)
    }

    /// ``observe(with:)`` with a block that runs (on the loop thread) if the observation ends for
    /// a reason other than removal: an invalid query or function, or the database closing.
    @discardableResult
    public func observe(with block: @escaping (AggregateSnapshot) -> Void, withCancel cancelBlock: ((any Error) -> Void)?)
        -> DatabaseHandle
    {
        let box = AggregateObserverBox(handle: self.core.makeHandle(), query: self, block: block, cancel: cancelBlock)
        self.core.observeAggregate(box)
        return box.handle
    }

    /// Removes the observer with `handle`; once this returns it receives nothing more (as
    /// ``DatabaseQuery/removeObserver(withHandle:)``). Unknown handles are ignored.
    public func removeObserver(withHandle handle: DatabaseHandle) {
        self.core.removeAggregateObserver(handle)
    }

    /// The successive values of the aggregate, starting with the current one; each element is a
    /// new value. The observer is removed when the consuming loop ends or its task is cancelled;
    /// the sequence finishes with an error if the observation is cancelled.
    ///
    /// - Complexity: As ``observe(with:)``.
    public func values() -> AsyncThrowingStream<AggregateSnapshot, any Error> {
        AsyncThrowingStream { continuation in
            let handle = self.observe(with: { continuation.yield($0) }, withCancel: { continuation.finish(throwing: $0) })
            continuation.onTermination = { _ in self.removeObserver(withHandle: handle) }
        }
    }
}

extension DatabaseQuery {
    /// Aggregates over the children in this query's range: `count`, and the `sum`, `average`,
    /// `min` and `max` of a child field's numbers, read with ``AggregateQuery/getData()`` or
    /// observed live with ``AggregateQuery/observe(with:)``.
    ///
    /// ```swift
    /// let live = db.reference(withPath: "ratings").queryOrdered(byChild: "stars").queryStarting(atValue: 3)
    ///     .aggregate(.count, .sum("stars"), .average("stars"), .min("stars"), .max("stars"))
    /// live.observe { print($0.count, $0.average("stars") ?? 0) }
    /// ```
    ///
    /// The range is the query's: its order, `startAt`/`startAfter`/`endAt`/`endBefore`/`equalTo`,
    /// and its limit (a limited query aggregates the children it shows).
    public func aggregate(_ functions: AggregateFunction...) -> AggregateQuery {
        AggregateQuery(query: self, functions: functions)
    }

    /// ``aggregate(_:)-(AggregateFunction...)`` taking an array.
    public func aggregate(_ functions: [AggregateFunction]) -> AggregateQuery {
        AggregateQuery(query: self, functions: functions)
    }
}
