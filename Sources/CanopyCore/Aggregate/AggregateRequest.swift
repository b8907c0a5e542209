/// What an aggregate query computes over the children in its range: a list of terms, each `count`
/// or a function (`sum`, `avg`, `min`, `max`) of one field of the children. Shared by the
/// library's `aggregate(...)`, the REST `aggregate=` parameter and the command line, so all three
/// validate the same way and name results the same way (see the Live Aggregates article).
package struct AggregateRequest: Sendable, Hashable {
    package enum Function: String, Sendable, Hashable, CaseIterable {
        case count
        case sum
        case average = "avg"
        case min
        case max
    }

    /// One term: `count`, or a function of the field at `field` (a child path; empty for the
    /// child's own value, spelled `$value`).
    package struct Term: Sendable, Hashable {
        package var function: Function
        package var field: [ChildKey]?

        /// The field as written in a term (`stats/rating`, or `$value`).
        package var fieldName: String? {
            self.field.map { $0.isEmpty ? "$value" : $0.map(\.string).joined(separator: "/") }
        }

        /// The term's name, and its key in the result: `count`, `sum(rating)`, `avg(stats/rating)`.
        package var name: String {
            guard let fieldName else { return self.function.rawValue }
            return "\(self.function.rawValue)(\(fieldName))"
        }

        package static let count = Term(function: .count, field: nil)

        /// A function of `field`, validated as `queryOrdered(byChild:)` validates a child path
        /// (`$value` for the child's own value).
        package static func of(_ function: Function, _ field: String) throws(DatabaseError) -> Term {
            precondition(function != .count, "count takes no field")
            if field == "$value" || field == ".value" { return Term(function: function, field: []) }
            do {
                guard case .child(let path) = try QueryBuilder.childIndex(field) else { fatalError("childIndex returns .child") }
                return Term(function: function, field: path)
            } catch {
                throw DatabaseError(
                    .invalidQuery,
                    "aggregate \(function.rawValue)(\(field)): the field must be a child path (non-empty, without '.' '#' '$' '[' or ']'), or $value."
                )
            }
        }
    }

    /// The terms, in the order asked, without repeats.
    package let terms: [Term]

    /// Whether a term asks for the minimum or maximum of `field`.
    package func needsMinMax(_ field: [ChildKey]?) -> Bool {
        self.terms.contains { $0.field == field && ($0.function == .min || $0.function == .max) }
    }
    /// The fields whose numbers the terms need (`nil` alone when only `count` is asked), distinct.
    package let fields: [[ChildKey]?]
    /// For each term, the index of its field in ``fields`` (0 for `count`: any field's summary
    /// counts the children).
    package let fieldOfTerm: [Int]

    /// - Throws: `.invalidQuery` when `terms` is empty.
    package init(_ terms: [Term]) throws(DatabaseError) {
        guard !terms.isEmpty else { throw DatabaseError(.invalidQuery, "aggregate needs at least one of count, sum, avg, min, max.") }
        var seen = Set<Term>()
        self.terms = terms.filter { seen.insert($0).inserted }
        var fields: [[ChildKey]?] = []
        for term in self.terms where term.field != nil && !fields.contains(term.field) { fields.append(term.field) }
        if fields.isEmpty { fields = [nil] }
        self.fields = fields
        self.fieldOfTerm = self.terms.map { term in term.field.flatMap { f in fields.firstIndex(of: f) } ?? 0 }
    }

    /// Parses a comma-separated list as the REST parameter and the command line take it:
    /// `count,sum(stars),avg(stats/rating),min($value)` (`average` is accepted for `avg`).
    package static func parse(_ text: String) throws(DatabaseError) -> AggregateRequest {
        if text.allSatisfy({ $0 == " " }) { return try AggregateRequest([]) }
        var terms: [Term] = []
        for raw in text.split(separator: ",", omittingEmptySubsequences: false) {
            let part = raw.trimmingSpaces
            if part == "count" || part == "count()" {
                terms.append(.count)
                continue
            }
            guard let open = part.firstIndex(of: "("), part.hasSuffix(")") else {
                throw DatabaseError(
                    .invalidQuery, "aggregate: \"\(part)\" is not count, sum(field), avg(field), min(field) or max(field).")
            }
            let name = String(part[..<open])
            let field = String(part[part.index(after: open)..<part.index(before: part.endIndex)])
            guard let function = name == "average" ? .average : Function(rawValue: name), function != .count else {
                throw DatabaseError(
                    .invalidQuery, "aggregate: unknown function \"\(name)\" in \"\(part)\" (use count, sum, avg, min or max).")
            }
            terms.append(try .of(function, field))
        }
        return try AggregateRequest(terms)
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(self.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
