import CanopyCore

extension QueryBuilder {
    /// An endpoint argument of the public API (`nil`/`NSNull`, a string, a number or a boolean)
    /// as JSON, for the builder's checks; any other value is refused with the builder's message.
    private static func json(_ value: Any?, method: String) throws(DatabaseError) -> JSONValue {
        do { return try JSONValue(any: value, function: method) } catch {
            throw invalid("You can only pass nil, NSString or NSNumber to \(method)")
        }
    }

    mutating func start(any value: Any?, childKey: String?, after: Bool) throws(DatabaseError) {
        try self.start(Self.json(value, method: Self.startMethod(after: after)), childKey: childKey, after: after)
    }

    mutating func end(any value: Any?, childKey: String?, before: Bool) throws(DatabaseError) {
        try self.end(Self.json(value, method: Self.endMethod(before: before)), childKey: childKey, before: before)
    }

    mutating func equal(any value: Any?, childKey: String?) throws(DatabaseError) {
        try self.equal(Self.json(value, method: Self.equalMethod), childKey: childKey)
    }
}
