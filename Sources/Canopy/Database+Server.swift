import CanopyCore

/// Query parameters of a REST request (`orderBy`, limits and bounds as JSON values), validated
/// by the same rules and with the same messages as the query builders. For Canopy's server.
package enum RESTQueryBuilder {
    /// A range constraint and its JSON value.
    package enum Bound: Sendable {
        case startAt(JSONValue)
        case startAfter(JSONValue)
        case endAt(JSONValue)
        case endBefore(JSONValue)
        case equalTo(JSONValue)
    }

    /// The engine's parameters for `orderBy` (`"$key"`, `"$value"`, `"$priority"` or a child path),
    /// the limits and the bounds, applied in that order.
    ///
    /// - Throws: ``DatabaseError`` `.invalidQuery` naming the problem.
    package static func params(orderBy: String, limitToFirst: UInt?, limitToLast: UInt?, bounds: [Bound]) throws(DatabaseError) -> QueryParams {
        var builder = QueryBuilder()
        switch orderBy {
        case "$key": try builder.order(by: .key)
        case "$value": try builder.order(by: .value)
        case "$priority": try builder.order(by: .priority)
        default: try builder.order(by: try QueryBuilder.childIndex(orderBy))
        }
        if let limitToFirst { try builder.limit(limitToFirst, first: true) }
        if let limitToLast { try builder.limit(limitToLast, first: false) }
        for bound in bounds {
            switch bound {
            case .startAt(let v): try builder.start(Self.any(v), childKey: nil, after: false)
            case .startAfter(let v): try builder.start(Self.any(v), childKey: nil, after: true)
            case .endAt(let v): try builder.end(Self.any(v), childKey: nil, before: false)
            case .endBefore(let v): try builder.end(Self.any(v), childKey: nil, before: true)
            case .equalTo(let v): try builder.equal(Self.any(v), childKey: nil)
            }
        }
        return builder.params
    }

    /// The value as the builders take it (objects and arrays are refused by them).
    private static func any(_ value: JSONValue) -> Any? {
        switch value {
        case .null: return nil
        case .bool(let b): return b
        case .int(let i): return Int(i)
        case .double(let d): return d
        case .string(let s): return s
        case .array, .object: return [Any]()
        }
    }
}
