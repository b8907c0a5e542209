import CanopyCore

extension DatabaseQuery {
    /// Orders children by key (integer keys first, numerically; then strings).
    public func queryOrderedByKey() -> DatabaseQuery { self.adding { try $0.order(by: .key) } }

    /// Orders children by value: null, false, true, numbers, strings, objects; ties by key.
    public func queryOrderedByValue() -> DatabaseQuery { self.adding { try $0.order(by: .value) } }

    /// Orders children by priority (the default order): none first, then numbers, then strings.
    public func queryOrderedByPriority() -> DatabaseQuery { self.adding { try $0.order(by: .priority) } }

    /// Orders children by the value at a child path, which may be nested (`"metrics/views"`);
    /// children without it come first.
    ///
    /// - Complexity: O(*m*) for a child path of *m* keys (validated).
    public func queryOrdered(byChild key: String) -> DatabaseQuery {
        self.adding { builder in try builder.order(by: try QueryBuilder.childIndex(key)) }
    }

    /// Keeps only the first `limit` children (in the query's order) of the range.
    public func queryLimited(toFirst limit: UInt) -> DatabaseQuery { self.adding { try $0.limit(limit, first: true) } }

    /// Keeps only the last `limit` children (in the query's order) of the range.
    public func queryLimited(toLast limit: UInt) -> DatabaseQuery { self.adding { try $0.limit(limit, first: false) } }

    /// Children whose order value is at least `startValue` (`nil`, a string, a number or a boolean).
    public func queryStarting(atValue startValue: Any?) -> DatabaseQuery { self.queryStarting(atValue: startValue, childKey: nil) }

    /// Children after the position `(startValue, childKey)`, inclusive; the key only separates
    /// children whose order value equals `startValue`.
    public func queryStarting(atValue startValue: Any?, childKey: String?) -> DatabaseQuery {
        self.adding { try $0.start(any: startValue, childKey: childKey, after: false) }
    }

    /// Children whose order value is greater than `startValue`.
    public func queryStarting(afterValue startAfterValue: Any?) -> DatabaseQuery {
        self.queryStarting(afterValue: startAfterValue, childKey: nil)
    }

    /// Children strictly after the position `(startAfterValue, childKey)`.
    public func queryStarting(afterValue startAfterValue: Any?, childKey: String?) -> DatabaseQuery {
        self.adding { try $0.start(any: startAfterValue, childKey: childKey, after: true) }
    }

    /// Children whose order value is at most `endValue`.
    public func queryEnding(atValue endValue: Any?) -> DatabaseQuery { self.queryEnding(atValue: endValue, childKey: nil) }

    /// Children up to the position `(endValue, childKey)`, inclusive.
    public func queryEnding(atValue endValue: Any?, childKey: String?) -> DatabaseQuery {
        self.adding { try $0.end(any: endValue, childKey: childKey, before: false) }
    }

    /// Children whose order value is less than `endValue`.
    public func queryEnding(beforeValue endValue: Any?) -> DatabaseQuery { self.queryEnding(beforeValue: endValue, childKey: nil) }

    /// Children strictly before the position `(endValue, childKey)`.
    public func queryEnding(beforeValue endValue: Any?, childKey: String?) -> DatabaseQuery {
        self.adding { try $0.end(any: endValue, childKey: childKey, before: true) }
    }

    /// Children whose order value equals `value`.
    public func queryEqual(toValue value: Any?) -> DatabaseQuery { self.queryEqual(toValue: value, childKey: nil) }

    /// The child with order value `value` and key `childKey`, if any.
    public func queryEqual(toValue value: Any?, childKey: String?) -> DatabaseQuery {
        self.adding { try $0.equal(any: value, childKey: childKey) }
    }

    /// A new query with one more constraint; an invalid one is kept as the query's error and
    /// reported to observers' cancel blocks, `getData`, and event sequences.
    private func adding(_ change: (inout QueryBuilder) throws -> Void) -> DatabaseQuery {
        var builder = self.builder
        var error = self.constraintError
        if error == nil {
            do {
                try change(&builder)
            } catch let failure as DatabaseError {
                error = failure
            } catch let failure {
                error = DatabaseError(.invalidQuery, "\(failure)")
            }
        }
        return DatabaseQuery(database: self.database, path: self.path, builder: builder, error: error)
    }
}
