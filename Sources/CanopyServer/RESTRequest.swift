import Canopy
import CanopyCore
import HTTPTypes

/// What a request addresses: the target, the decoded query parameters.
struct RESTTarget {
    enum Kind {
        /// A location (`/a/b.json`).
        case data(DatabasePath)
        /// The priority of a location (`/a/b/.priority.json`).
        case priority(DatabasePath)
        /// `/.settings/rules.json`.
        case rules
    }

    var kind: Kind
    var parameters: [String: String]

    /// Parses the request target (`/path.json?query`), percent-decoding path segments and query
    /// values (a `+` stays a plus, as firebase-admin means it).
    init(uri: String) throws(RESTError) {
        let raw = uri.utf8
        let queryStart = raw.firstIndex(of: UInt8(ascii: "?"))
        let pathPart = Substring(uri.utf8[..<(queryStart ?? raw.endIndex)])
        var parameters: [String: String] = [:]
        if let queryStart {
            let query = Substring(uri.utf8[raw.index(after: queryStart)...])
            for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
                let name: Substring
                let value: Substring
                if let eq = pair.firstIndex(of: "=") {
                    name = pair[..<eq]
                    value = pair[pair.index(after: eq)...]
                } else {
                    name = pair
                    value = ""
                }
                let decodedName = try Self.percentDecode(name, what: "query parameter name")
                // Two orderBy (or limitToFirst, print…) are a mistake, not a choice of the last one.
                guard parameters[decodedName] == nil else {
                    throw .badRequest("\(decodedName) is given twice; give each query parameter once.")
                }
                parameters[decodedName] = try Self.percentDecode(value, what: "query parameter \(name)")
            }
        }
        self.parameters = parameters
        guard pathPart.hasSuffix(".json") else {
            throw .badRequest("Unsupported path \"\(pathPart)\": REST locations end in .json (for example /users/ada.json, or /.json for the root).")
        }
        let stem = pathPart.dropLast(5)
        var segments: [String] = []
        for segment in stem.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            segments.append(try Self.percentDecode(Substring(segment), what: "path"))
        }
        if segments == [".settings", "rules"] {
            self.kind = .rules
            return
        }
        var isPriority = false
        if segments.last == ".priority" {
            isPriority = true
            segments.removeLast()
        }
        var keys: [ChildKey] = []
        keys.reserveCapacity(segments.count)
        var bytes = 0
        for segment in segments {
            guard KeyValidation.isValidKey(segment) || (keys.isEmpty && segment == ".info") else {
                throw .badRequest("Invalid path \"\(Self.display(segments))\": keys must be non-empty and can't contain \".\", \"#\", \"$\", \"[\", \"]\" or control characters.")
            }
            bytes += 1 + segment.utf8.count
            keys.append(ChildKey(segment))
        }
        if keys.count > KeyValidation.maxDepth {
            throw .badRequest("Invalid path \"\(Self.display(segments))\": deeper than \(KeyValidation.maxDepth) levels.")
        }
        if bytes > KeyValidation.maxPathBytes {
            throw .badRequest("Invalid path: longer than \(KeyValidation.maxPathBytes) bytes.")
        }
        let path = DatabasePath(keys)
        self.kind = isPriority ? .priority(path) : .data(path)
    }

    private static func display(_ segments: [String]) -> String { "/" + segments.joined(separator: "/") }

    static func percentDecode(_ text: Substring, what: String) throws(RESTError) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var it = Array(text.utf8)[...]
        while let b = it.popFirst() {
            guard b == UInt8(ascii: "%") else {
                out.append(b)
                continue
            }
            guard it.count >= 2, let hi = Self.hex(it[it.startIndex]), let lo = Self.hex(it[it.startIndex + 1]) else {
                throw .badRequest("Invalid percent-encoding in the \(what).")
            }
            out.append(hi << 4 | lo)
            it = it.dropFirst(2)
        }
        guard let decoded = String(validating: out, as: UTF8.self) else {
            throw .badRequest("Invalid UTF-8 in the \(what).")
        }
        return decoded
    }

    private static func hex(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// The read options of a GET (or a stream): query, `shallow`, `format=export`.
struct ReadOptions {
    var query: QueryParams?
    var shallow = false
    var export = false

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
                throw .badRequest("shallow cannot be combined with orderBy other than \"$key\" or with \(present.filter { !allowed.contains($0) }.joined(separator: ", ")).")
            }
        }
        func limit(_ name: String) throws(RESTError) -> UInt? {
            guard let raw = parameters[name] else { return nil }
            guard let value = UInt(raw) else { throw .badRequest("\(name) must be a positive integer, not \"\(raw)\".") }
            return value
        }
        var bounds: [RESTQueryBuilder.Bound] = []
        for name in ["startAt", "startAfter", "endAt", "endBefore", "equalTo"] {
            guard let raw = parameters[name] else { continue }
            let value: JSONValue
            do { value = try Self.json(raw) } catch { throw .badRequest("\(name) must be a JSON value (a quoted string, a number, a boolean or null), not \(raw).") }
            switch name {
            case "startAt": bounds.append(.startAt(value))
            case "startAfter": bounds.append(.startAfter(value))
            case "endAt": bounds.append(.endAt(value))
            case "endBefore": bounds.append(.endBefore(value))
            default: bounds.append(.equalTo(value))
            }
        }
        let first = try limit("limitToFirst")
        let last = try limit("limitToLast")
        do throws(DatabaseError) {
            self.query = try RESTQueryBuilder.params(orderBy: orderBy, limitToFirst: first, limitToLast: last, bounds: bounds)
        } catch {
            throw .badRequest(error.message)
        }
    }

    var hasFilters: Bool { self.query?.isFiltered ?? false }

    static func json(_ text: String) throws -> JSONValue {
        var builder = JSONValueBuilder()
        return try JSONParser().parse(text, into: &builder)
    }

    /// What the client gets for `node` at the location.
    func apply(_ node: Node) -> Node {
        var result = node
        if let query = self.query { result = QueryWindow.apply(result, query) }
        if self.shallow, case .children(let c) = result {
            var keys: [ChildKey] = []
            keys.reserveCapacity(c.map.count)
            for (key, _) in c.map { keys.append(key) }
            result = Node.from(children: SortedMap(sortedKeys: keys, values: Array(repeating: Node.leaf(.bool(true)), count: keys.count)))
        }
        return result
    }
}
