package import CanopyCore

/// One application message from an SDK: a control message or a data request.
package enum ClientMessage: Sendable, Equatable {
    /// `{"t":"c","d":{"t":TYPE,"d":...}}`: `p` is a ping (answered with a pong); `a` and `n` belong to
    /// the long-poll upgrade.
    case control(type: String)
    /// `{"t":"d","d":{"r":ID,"a":ACTION,"b":BODY}}`.
    case request(id: Int64, action: ClientAction)

    /// Why a message cannot be read; the connection is closed with a protocol error.
    package struct Malformed: Error, Equatable, Sendable {
        package let reason: String
        package init(reason: String) { self.reason = reason }
    }

    /// Reads a message from its JSON text.
    ///
    /// - Throws: ``Malformed`` naming what is wrong; a request whose body does not fit its action is
    ///   not malformed (it is answered with an error status: see ``ClientAction/invalid(_:_:)``).
    package init(parsing text: String) throws(Malformed) {
        let value: JSONValue
        do { value = try JSONValue(parsing: text) } catch { throw Malformed(reason: "not JSON") }
        guard let layer = value["t"]?.stringValue, let payload = value["d"] else {
            throw Malformed(reason: "a message is {\"t\": layer, \"d\": payload}")
        }
        switch layer {
        case "c":
            guard let type = payload["t"]?.stringValue else { throw Malformed(reason: "a control message needs \"t\"") }
            self = .control(type: type)
        case "d":
            guard let id = payload["r"]?.int64Value else { throw Malformed(reason: "a request needs an integer \"r\"") }
            guard let action = payload["a"]?.stringValue else { throw Malformed(reason: "a request needs an action \"a\"") }
            self = .request(id: id, action: ClientAction(action: action, body: payload["b"] ?? .null))
        default:
            throw Malformed(reason: "unknown layer \"\(layer)\"")
        }
    }
}

/// A data request's action and body (every action the JS, iOS and Android SDKs send).
package enum ClientAction: Sendable, Equatable {
    /// `q`: listen; `query` is `nil` for a default listen, `tag` present for a tagged one.
    case listen(path: DatabasePath, query: QueryParams?, tag: Int64?, hash: String)
    /// `n`: unlisten.
    case unlisten(path: DatabasePath, query: QueryParams?, tag: Int64?)
    /// `p`: set (`hash` present: a transaction's compare-and-set); the data already checked and
    /// converted into the value a set of `path` writes (never under `/.info/`).
    case put(path: DatabasePath, value: WriteValue, hash: String?)
    /// `p` at `PATH/.priority`: set the priority of the location (`setPriority`).
    case putPriority(path: DatabasePath, priority: JSONValue)
    /// `m`: update; the members already checked and converted into entries, in the order
    /// ``UpdateEntries`` gives them (none for an empty update).
    case merge(path: DatabasePath, entries: [WriteOperation.Entry])
    /// `g`: read once.
    case get(path: DatabasePath, query: QueryParams)
    /// `o`: set when the connection closes (converted as a put's).
    case onDisconnectPut(path: DatabasePath, value: WriteValue)
    /// `om`: update when the connection closes (converted as a merge's).
    case onDisconnectMerge(path: DatabasePath, entries: [WriteOperation.Entry])
    /// `oc`: forget the close-time writes at and below the path.
    case onDisconnectCancel(path: DatabasePath)
    /// `tm` (a Canopy extension, sent by `Database(url:)` for `runTransaction`): a merge applied only
    /// when the data at each location of `readHashes` (path → Firebase data hash) still hashes so.
    case transactionMerge(path: DatabasePath, entries: [WriteOperation.Entry], readHashes: [String: String])
    /// `s`: client statistics (acknowledged, otherwise ignored).
    case stats
    /// `auth` (a JWT) or `gauth` (any other credential, such as the emulator's `owner`).
    case auth(credential: String, authVariable: JSONValue?, noAuth: Bool)
    /// `unauth`: forget the credential.
    case unauth
    /// `appcheck`: an App Check token.
    case appCheck(token: String)
    /// `unappeck` (JS) / `unappcheck` (Android): forget the App Check token.
    case unAppCheck
    /// An action this server does not know.
    case unknown(String)
    /// A known action whose body does not fit it: answered with `status` and `message`.
    case invalid(_ status: String, _ message: String)

    init(action: String, body: JSONValue) {
        do {
            self = try Self.read(action: action, body: body)
        } catch {
            self = .invalid(error.code.name, error.message)
        }
    }

    private static func read(action: String, body: JSONValue) throws(DatabaseError) -> ClientAction {
        switch action {
        case "q":
            let query = try self.query(body)
            return .listen(path: try self.path(body), query: query.params, tag: query.tag, hash: body["h"]?.stringValue ?? "")
        case "n":
            let query = try self.query(body)
            return .unlisten(path: try self.path(body), query: query.params, tag: query.tag)
        case "p":
            if let location = try self.priorityPath(body) { return .putPriority(path: location, priority: try self.data(body)) }
            let path = try self.path(body)
            return .put(path: path, value: try self.value(body, at: path, function: "set"), hash: body["h"]?.stringValue)
        case "m":
            let path = try self.path(body)
            return .merge(path: path, entries: try self.entries(body, at: path, function: "update"))
        case "g":
            return .get(path: try self.path(body), query: try WireQuery.params(body["q"]))
        case "o":
            let path = try self.path(body)
            return .onDisconnectPut(path: path, value: try self.value(body, at: path, function: "onDisconnectSetValue"))
        case "om":
            let path = try self.path(body)
            return .onDisconnectMerge(path: path, entries: try self.entries(body, at: path, function: "onDisconnectUpdateChildValues"))
        case "oc":
            return .onDisconnectCancel(path: try self.path(body))
        case "tm":
            guard let hashes = body["hs"]?.objectValue else {
                throw DatabaseError(.invalidValue, "a transaction merge needs an object \"hs\"")
            }
            var readHashes: [String: String] = [:]
            for (path, hash) in hashes {
                guard let text = hash.stringValue else { throw DatabaseError(.invalidValue, "the hash of \"\(path)\" must be a string") }
                readHashes[path] = text
            }
            let path = try self.path(body)
            return .transactionMerge(path: path, entries: try self.entries(body, at: path, function: "transaction"), readHashes: readHashes)
        case "s":
            return .stats
        case "auth", "gauth":
            guard let credential = body["cred"]?.stringValue else {
                throw DatabaseError(.invalidValue, "\(action) needs a credential \"cred\"")
            }
            return .auth(credential: credential, authVariable: body["authvar"], noAuth: body["noauth"]?.boolValue ?? false)
        case "unauth":
            return .unauth
        case "appcheck":
            return .appCheck(token: body["token"]?.stringValue ?? "")
        case "unappeck", "unappcheck":
            return .unAppCheck
        default:
            return .unknown(action)
        }
    }

    /// The path: `/a/b` and `a/b` alike (parsing drops empty segments, as the SDKs do).
    private static func path(_ body: JSONValue) throws(DatabaseError) -> DatabasePath {
        guard let text = body["p"]?.stringValue else { throw DatabaseError(.invalidPath, "a request needs a path \"p\"") }
        return try DatabasePath(validating: text, function: "path")
    }

    /// The location whose priority a path `LOCATION/.priority` names, or `nil` for another path.
    private static func priorityPath(_ body: JSONValue) throws(DatabaseError) -> DatabasePath? {
        guard let text = body["p"]?.stringValue else { return nil }
        var segments = text.split(separator: "/", omittingEmptySubsequences: true)
        guard segments.last == ".priority" else { return nil }
        segments.removeLast()
        return try DatabasePath(validating: segments.joined(separator: "/"), function: "setPriority")
    }

    private static func data(_ body: JSONValue) throws(DatabaseError) -> JSONValue {
        guard let data = body["d"] else { throw DatabaseError(.invalidValue, "a write needs data \"d\"") }
        return data
    }

    private static func members(_ body: JSONValue) throws(DatabaseError) -> [String: JSONValue] {
        guard let members = body["d"]?.objectValue else { throw DatabaseError(.invalidValue, "a merge needs an object \"d\"") }
        return members
    }

    /// The value a set of `path` writes, as `function` (`set`, `onDisconnectSetValue`) checks it.
    private static func value(_ body: JSONValue, at path: DatabasePath, function: String) throws(DatabaseError) -> WriteValue {
        try path.checkWritable()
        var converter = try ValueConverter(function: function, location: path.keys.map(\.string))
        return try converter.convert(try self.data(body))
    }

    /// The entries an update of `path` writes, as `function` (`update`, …) checks them.
    private static func entries(_ body: JSONValue, at path: DatabasePath, function: String) throws(DatabaseError) -> [WriteOperation.Entry]
    {
        try path.checkWritable()
        return try UpdateEntries.entries(try self.members(body), location: path.keys, function: function)
    }

    /// A listen's query and tag: none for a default listen (no `q`, or a `q` that filters nothing).
    private static func query(_ body: JSONValue) throws(DatabaseError) -> (params: QueryParams?, tag: Int64?) {
        guard let q = body["q"], !q.isNull else { return (nil, nil) }
        let params = try WireQuery.params(q)
        guard let tag = body["t"] else { return (params, nil) }
        guard let t = tag.int64Value else { throw DatabaseError(.invalidQuery, "a query's tag \"t\" must be an integer") }
        return (params, t)
    }
}
