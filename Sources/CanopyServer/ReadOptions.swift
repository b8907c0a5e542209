import CanopyCore

/// The read options of a GET (or a stream), parsed from its query parameters: the query
/// (`orderBy`, `limitToFirst`, `limitToLast`, `startAt`, `startAfter`, `endAt`, `endBefore`,
/// `equalTo`, each a JSON value), `shallow`, `format=export` and `aggregate` (Canopy's live
/// aggregates: `aggregate=count,sum(stars),avg(stars),min(stars),max(stars)`).
struct ReadOptions {
    var query: QueryParams?
    var shallow = false
    var export = false
    /// `aggregate=`: the response is the aggregate of the query's range, not its data.
    var aggregate: AggregateRequest?

    static let filterNames = ["orderBy", "limitToFirst", "limitToLast", "startAt", "startAfter", "endAt", "endBefore", "equalTo"]

    init(_ parameters: [String: String]) throws(RESTError) {
        if let format = parameters["format"] {
            switch format {
            case "export": self.export = true
            case "strict", "": break
            default: throw .badRequest("format must be \"export\" (or \"strict\"), not \"\(format)\".")
            }
        }
        if let shallow = parameters["shallow"] {
            switch shallow {
            case "true": self.shallow = true
            case "false": break
            default: throw .badRequest("shallow must be true or false.")
            }
        }
        if let raw = parameters["aggregate"] {
            if self.shallow || self.export {
                throw .badRequest("aggregate cannot be combined with \(self.shallow ? "shallow" : "format=export").")
            }
            do { self.aggregate = try AggregateRequest.parse(raw) } catch { throw .badRequest(error.message) }
        }
        let present = Self.filterNames.filter { parameters[$0] != nil }
        if present.isEmpty { return }
        var orderBy: String
        if let raw = parameters["orderBy"] {
            guard case .string(let s)? = try? Self.json(raw) else {
                throw .badRequest("orderBy must be a valid JSON encoded path")
            }
            orderBy = s
        } else if self.shallow {
            orderBy = "$key"
        } else {
            throw .badRequest("orderBy must be defined when other query parameters are defined")
        }
        if self.shallow {
            // firebase-tools pages shallow listings with limitToFirst and startAfter in key order.
            let allowed: Set = ["orderBy", "limitToFirst", "startAfter", "startAt"]
            if orderBy != "$key" || present.contains(where: { !allowed.contains($0) }) {
                throw .badRequest(
                    "shallow cannot be combined with orderBy other than \"$key\" or with \(present.filter { !allowed.contains($0) }.joined(separator: ", "))."
                )
            }
        }
        func limit(_ name: String) throws(RESTError) -> UInt? {
            guard let raw = parameters[name] else { return nil }
            guard let value = UInt(raw) else { throw .badRequest("\(name) must be a positive integer, not \"\(raw)\".") }
            return value
        }
        var bounds: [(name: String, value: JSONValue)] = []
        for name in ["startAt", "startAfter", "endAt", "endBefore", "equalTo"] {
            guard let raw = parameters[name] else { continue }
            do { bounds.append((name, try Self.json(raw))) } catch {
                throw .badRequest("\(name) must be a JSON value (a quoted string, a number, a boolean or null), not \(raw).")
            }
        }
        let first = try limit("limitToFirst")
        let last = try limit("limitToLast")
        do throws(DatabaseError) {
            self.query = try Self.query(orderBy: orderBy, limitToFirst: first, limitToLast: last, bounds: bounds)
        } catch {
            throw .badRequest(error.message)
        }
    }

    /// The query of `orderBy` (`"$key"`, `"$value"`, `"$priority"` or a child path), the limits and
    /// the bounds, added in that order to the library's ``QueryBuilder``: the same checks and
    /// messages as `queryOrdered(byChild:)`, `queryLimited(toFirst:)`, `queryStarting(atValue:)`…
    private static func query(orderBy: String, limitToFirst: UInt?, limitToLast: UInt?, bounds: [(name: String, value: JSONValue)])
        throws(DatabaseError) -> QueryParams
    {
        var builder = QueryBuilder()
        switch orderBy {
        case "$key": try builder.order(by: .key)
        case "$value": try builder.order(by: .value)
        case "$priority": try builder.order(by: .priority)
        default: try builder.order(by: try QueryBuilder.childIndex(orderBy))
        }
        if let limitToFirst { try builder.limit(limitToFirst, first: true) }
        if let limitToLast { try builder.limit(limitToLast, first: false) }
        for (name, value) in bounds {
            switch name {
            case "startAt": try builder.start(value, childKey: nil, after: false)
            case "startAfter": try builder.start(value, childKey: nil, after: true)
            case "endAt": try builder.end(value, childKey: nil, before: false)
            case "endBefore": try builder.end(value, childKey: nil, before: true)
            default: try builder.equal(value, childKey: nil)
            }
        }
        return builder.params
    }

    var hasFilters: Bool { self.query?.isFiltered ?? false }

    static func json(_ text: String) throws -> JSONValue {
        var builder = JSONValueBuilder()
        return try JSONParser().parse(text, into: &builder)
    }

    /// What the client gets for `node` at the location.
    func apply(_ node: Node) -> Node {
        var result = node
        if let query = self.query { result = QueryWindow.node(of: result, params: query) }
        if self.shallow { result = result.shallow }
        return result
    }
}
