/// The constraints a query was built from, as called, and the rules for adding one more: the one
/// validation of queries, shared by the library's query builders (which convert their `Any`
/// arguments to JSON first) and the server's REST query parameters. The messages are the iOS
/// SDK's.
///
/// The rules: one order, one limit, one start and one end (`equalTo` sets both); a limit is
/// between 1 and 2^31 - 1; an endpoint is null, a boolean, a number or a string, with an optional
/// child key to separate equal values; in key order an endpoint is a string and takes no child
/// key; in priority order it is not a boolean (priorities never are). The order and the
/// endpoints are checked against each other whichever comes first.
package struct QueryBuilder: Sendable, Hashable {
    package struct Endpoint: Sendable, Hashable {
        package var value: LeafValue?
        package var key: String?
        /// `startAfter` / `endBefore`.
        package var exclusive: Bool
        /// Set by `equalTo`.
        package var isEqualTo: Bool
    }

    package var index: QueryIndex = .priority
    package var orderSet = false
    package var start: Endpoint?
    package var end: Endpoint?
    package var limit: QueryParams.Limit?

    package init() {}

    /// The engine's parameters for these constraints.
    package var params: QueryParams {
        QueryParams(
            index: self.index, start: self.start.map { self.bound($0, isStart: true) },
            end: self.end.map { self.bound($0, isStart: false) }, limit: self.limit)
    }

    private func bound(_ e: Endpoint, isStart: Bool) -> QueryBound {
        if self.index == .key {
            let key: QueryBound.Key
            if case .string(let s)? = e.value { key = .key(ChildKey(s)) } else { key = isStart ? .min : .max }
            return QueryBound(value: nil, key: key, inclusive: !e.exclusive)
        }
        let key: QueryBound.Key
        if let k = e.key {
            key = .key(ChildKey(k))
        } else {
            // Without a child key: startAt(v) starts before every child with value v, startAfter(v)
            // after all of them; endAt(v) ends after all of them, endBefore(v) before them.
            key = (isStart != e.exclusive) ? .min : .max
        }
        return QueryBound(value: e.value, key: key, inclusive: !e.exclusive)
    }

    package static func invalid(_ message: String) -> DatabaseError { DatabaseError(.invalidQuery, message) }

    // MARK: - Order

    package mutating func order(by index: QueryIndex) throws(DatabaseError) {
        if self.orderSet { throw Self.invalid("Cannot use multiple queryOrderedBy calls!") }
        self.orderSet = true
        self.index = index
        try self.validateEndpoints()
    }

    package static func childIndex(_ path: String) throws(DatabaseError) -> QueryIndex {
        switch path {
        case "$key", ".key": throw invalid("(queryOrderedByChild:) \(path) is invalid.  Use queryOrderedByKey: instead.")
        case "$priority", ".priority": throw invalid("(queryOrderedByChild:) \(path) is invalid.  Use queryOrderedByPriority: instead.")
        case "$value", ".value": throw invalid("(queryOrderedByChild:) \(path) is invalid.  Use queryOrderedByValue: instead.")
        default: break
        }
        let invalidPath = invalid("(queryOrderedByChild:) Must be a non-empty string and not contain '.' '#' '$' '[' or ']'")
        guard !path.isEmpty else { throw invalidPath }
        let parsed: DatabasePath
        do { parsed = try DatabasePath(validating: path, function: "queryOrdered(byChild:)") } catch { throw invalidPath }
        if parsed.isRoot { throw invalid("(queryOrderedByChild:) with an empty path is invalid.  Use queryOrderedByValue: instead.") }
        if parsed.isInfo { throw invalidPath }
        return .child(parsed.keys)
    }

    // MARK: - Limits

    package mutating func limit(_ limit: UInt, first: Bool) throws(DatabaseError) {
        let method = first ? "queryLimitedToFirst:" : "queryLimitedToLast:"
        if self.limit != nil { throw Self.invalid("Can't call \(method) if a limit was previously set") }
        if limit == 0 { throw Self.invalid("Limit can't be zero") }
        if limit >= 1 << 31 { throw Self.invalid("Limit must be less than 2,147,483,648") }
        self.limit = first ? .first(Int(limit)) : .last(Int(limit))
    }

    // MARK: - Endpoints

    /// The name of the start method in messages.
    package static func startMethod(after: Bool) -> String { after ? "queryStartingAfterValue:" : "queryStartingAtValue:" }
    /// The name of the end method in messages.
    package static func endMethod(before: Bool) -> String { before ? "queryEndingBeforeValue:" : "queryEndingAtValue:" }
    /// The name of the equal method in messages.
    package static let equalMethod = "queryEqualToValue:"

    /// Converts an endpoint value: null, a string, a number or a boolean.
    package static func endpointValue(_ value: JSONValue, method: String) throws(DatabaseError) -> LeafValue? {
        switch value {
        case .null: return nil
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .array, .object: throw invalid("You can only pass nil, NSString or NSNumber to \(method)")
        }
    }

    package static func checkChildKey(_ key: String?, method: String) throws(DatabaseError) {
        guard let key else { return }
        if !KeyValidation.isValidKey(key) {
            throw invalid("(\(method)childKey:) Must be a non-empty string and not contain '/' '.' '#' '$' '[' or ']'")
        }
    }

    /// The leaf of an endpoint given to `method` (`keyedMethod` with a child key), after the checks
    /// every endpoint method makes: a valid value and child key, and no child key on the key index.
    private func endpointLeaf(_ value: JSONValue, childKey: String?, method: String, keyedMethod: String? = nil) throws(DatabaseError)
        -> LeafValue?
    {
        let leaf = try Self.endpointValue(value, method: method)
        try Self.checkChildKey(childKey, method: method)
        if self.index == .key && childKey != nil {
            throw Self.invalid("You must use \(method) instead of \(keyedMethod ?? method)childKey: when using queryOrderedByKey:")
        }
        return leaf
    }

    package mutating func start(_ value: JSONValue, childKey: String?, after: Bool) throws(DatabaseError) {
        let method = Self.startMethod(after: after)
        let leaf = try self.endpointLeaf(value, childKey: childKey, method: method)
        if self.start != nil {
            throw Self.invalid(
                "Can't call \(method) after queryStartingAtValue, queryStartingAfterValue, or queryEqualToValue was previously called")
        }
        self.start = Endpoint(value: leaf, key: childKey, exclusive: after, isEqualTo: false)
        try self.validateEndpoints()
    }

    package mutating func end(_ value: JSONValue, childKey: String?, before: Bool) throws(DatabaseError) {
        let method = Self.endMethod(before: before)
        let leaf = try self.endpointLeaf(value, childKey: childKey, method: method)
        if self.end != nil {
            throw Self.invalid("Can't call \(method) after queryEndingAtValue or queryEqualToValue was previously called")
        }
        self.end = Endpoint(value: leaf, key: childKey, exclusive: before, isEqualTo: false)
        try self.validateEndpoints()
    }

    package mutating func equal(_ value: JSONValue, childKey: String?) throws(DatabaseError) {
        let leaf = try self.endpointLeaf(value, childKey: childKey, method: Self.equalMethod, keyedMethod: "queryEqualTo:")
        if self.start != nil || self.end != nil {
            throw Self.invalid(
                "Can't call queryEqualToValue: after queryStartingAtValue, queryStartingAfterValue, queryEndingAtValue, queryEndingBeforeValue or queryEqualToValue was previously called"
            )
        }
        self.start = Endpoint(value: leaf, key: childKey, exclusive: false, isEqualTo: true)
        self.end = Endpoint(value: leaf, key: childKey, exclusive: false, isEqualTo: true)
        try self.validateEndpoints()
    }

    /// Endpoint rules that depend on the order (checked whichever comes first).
    private func validateEndpoints() throws(DatabaseError) {
        switch self.index {
        case .key:
            // The start's rules, then the end's, each with its own message.
            let checks = [
                (
                    self.start,
                    "Can't use queryStartingAtValue:childKey:, queryStartingAfterValue:childKey:, or queryEqualTo:andChildKey: in combination with queryOrderedByKey",
                    "Can't use queryStartingAtValue: or queryStartingAfterValue: with non-string types when used with queryOrderedByKey"
                ),
                (
                    self.end,
                    "Can't use queryEndingAtValue:childKey: or queryEndingBeforeValue:childKey: queryEqualToValue:childKey: in combination with queryOrderedByKey",
                    "Can't use queryEndingAtValue: or queryEndingBeforeValue: with other types than string in combination with queryOrderedByKey"
                ),
            ]
            for case (let endpoint?, let keyMessage, let typeMessage) in checks {
                if endpoint.key != nil { throw Self.invalid(keyMessage) }
                guard case .string? = endpoint.value else { throw Self.invalid(typeMessage) }
            }
        case .priority:
            for endpoint in [self.start, self.end].compactMap({ $0 }) {
                if case .bool? = endpoint.value {
                    throw Self.invalid(
                        "When using queryOrderedByPriority, values provided to queryStartingAtValue:, queryStartingAfterValue:, queryEndingAtValue:, queryEndingBeforeValue:, or queryEqualToValue: must be valid priorities."
                    )
                }
            }
        case .value, .child:
            break
        }
    }
}
