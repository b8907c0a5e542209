package import CanopyCore

/// The SDKs' query object (the `q` of a listen, an unlisten and a get), read into the engine's
/// query parameters and written back.
///
/// Keys: `i` the index (`.key`, `.value`, a child path; absent for priority order), `sp`/`ep` the
/// start and end values, `sn`/`en` their key names (`[MIN_NAME]` and `[MAX_NAME]` stand below and
/// above every key; absent, a start is at the smallest key and an end at the largest), `sin`/`ein`
/// whether each is inclusive (absent: inclusive), `l` a limit and `vf` its anchor (`l` for
/// limitToFirst, `r` for limitToLast; absent, `l` when there is a start bound, else `r`).
package enum WireQuery {
    static let minName = "[MIN_NAME]"
    static let maxName = "[MAX_NAME]"

    /// The query parameters a wire query object describes; `nil` or an empty object is the
    /// default query (every child, in priority order).
    ///
    /// - Throws: ``DatabaseError`` `.invalidQuery` naming the offending member.
    package static func params(_ object: JSONValue?) throws(DatabaseError) -> QueryParams {
        guard let object, !object.isNull else { return .default }
        guard let members = object.objectValue else { throw invalid("the query must be an object") }
        var params = QueryParams()
        if let index = members["i"] {
            params.index = try self.index(index)
        }
        if let value = members["sp"] {
            params.start = try self.bound(value: value, name: members["sn"], inclusive: members["sin"], index: params.index, isStart: true)
        } else if members["sn"] != nil {
            throw invalid("\"sn\" needs \"sp\"")
        }
        if let value = members["ep"] {
            params.end = try self.bound(value: value, name: members["en"], inclusive: members["ein"], index: params.index, isStart: false)
        } else if members["en"] != nil {
            throw invalid("\"en\" needs \"ep\"")
        }
        if let limit = members["l"] {
            guard let n = limit.int64Value, n >= 1, n < 1 << 31 else { throw invalid("\"l\" must be an integer from 1 to 2147483647") }
            let anchor = members["vf"]?.stringValue ?? (params.start != nil ? "l" : "r")
            switch anchor {
            case "l": params.limit = .first(Int(n))
            case "r": params.limit = .last(Int(n))
            default: throw invalid("\"vf\" must be \"l\" or \"r\"")
            }
        } else if members["vf"] != nil {
            throw invalid("\"vf\" needs \"l\"")
        }
        return params
    }

    private static func index(_ value: JSONValue) throws(DatabaseError) -> QueryIndex {
        guard let name = value.stringValue else { throw invalid("\"i\" must be a string") }
        switch name {
        case ".key": return .key
        case ".value": return .value
        case ".priority": return .priority
        default:
            let path: DatabasePath
            do { path = try DatabasePath(validating: name, function: "query") } catch {
                throw invalid("\"i\" is not a valid child path: \(name)")
            }
            if path.isRoot { return .value }
            return .child(path.keys)
        }
    }

    private static func bound(value: JSONValue, name: JSONValue?, inclusive: JSONValue?, index: QueryIndex, isStart: Bool)
        throws(DatabaseError) -> QueryBound
    {
        let member = isStart ? "sp" : "ep"
        var isInclusive = true
        if let inclusive {
            guard let b = inclusive.boolValue else { throw invalid("\"\(isStart ? "sin" : "ein")\" must be a boolean") }
            isInclusive = b
        }
        if index == .key {
            guard let key = value.stringValue else { throw invalid("\"\(member)\" must be a key (a string) with the key index") }
            return QueryBound(value: nil, key: Self.keyBound(key), inclusive: isInclusive)
        }
        let leaf: LeafValue?
        switch value {
        case .null: leaf = nil
        case .bool(let b):
            if index == .priority {
                throw invalid("\"\(member)\" must be a valid priority (null, a number or a string) with the priority index")
            }
            leaf = .bool(b)
        case .int(let i): leaf = .int(i)
        case .double(let d): leaf = .double(d)
        case .string(let s): leaf = .string(s)
        case .array, .object: throw invalid("\"\(member)\" must be null, a boolean, a number or a string")
        }
        let key: QueryBound.Key
        switch name {
        case nil: key = isStart ? .min : .max
        case .string(let k)?: key = Self.keyBound(k)
        default: throw invalid("\"\(isStart ? "sn" : "en")\" must be a string")
        }
        return QueryBound(value: leaf, key: key, inclusive: isInclusive)
    }

    /// The wire query object for `params`, as the JS SDK writes it (`sin`/`ein` always present).
    package static func object(_ params: QueryParams) -> JSONValue {
        var members: [String: JSONValue] = [:]
        switch params.index {
        case .priority: break
        case .key: members["i"] = ".key"
        case .value: members["i"] = ".value"
        case .child(let keys): members["i"] = .string(keys.map(\.string).joined(separator: "/"))
        }
        if let start = params.start {
            self.write(start, value: "sp", name: "sn", inclusive: "sin", isStart: true, index: params.index, into: &members)
        }
        if let end = params.end {
            self.write(end, value: "ep", name: "en", inclusive: "ein", isStart: false, index: params.index, into: &members)
        }
        switch params.limit {
        case .first(let n)?:
            members["l"] = .int(Int64(n))
            members["vf"] = "l"
        case .last(let n)?:
            members["l"] = .int(Int64(n))
            members["vf"] = "r"
        case nil: break
        }
        return .object(members)
    }

    private static func write(
        _ bound: QueryBound, value: String, name: String, inclusive: String, isStart: Bool, index: QueryIndex,
        into members: inout [String: JSONValue]
    ) {
        members[inclusive] = .bool(bound.inclusive)
        if index == .key {
            members[value] = .string(Self.keyName(bound.key))
            return
        }
        members[value] = bound.value?.jsonValue ?? .null
        // The key name is left out where it is the default (a start at the smallest key, an end
        // at the largest).
        if bound.key != (isStart ? .min : .max) { members[name] = .string(Self.keyName(bound.key)) }
    }

    private static func keyBound(_ name: String) -> QueryBound.Key {
        switch name {
        case Self.minName: return .min
        case Self.maxName: return .max
        default: return .key(ChildKey(name))
        }
    }

    private static func keyName(_ key: QueryBound.Key) -> String {
        switch key {
        case .min: return Self.minName
        case .max: return Self.maxName
        case .key(let k): return k.string
        }
    }

    private static func invalid(_ detail: String) -> DatabaseError {
        DatabaseError(.invalidQuery, "Invalid query object: \(detail).")
    }
}
