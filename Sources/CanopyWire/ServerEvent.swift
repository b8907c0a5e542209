package import CanopyCore

/// One message from the server, read from its JSON text (a whole message: frames already
/// reassembled by ``WireFrameAssembler``).
///
/// Data comes out as ``CanopyCore/Node``: the frame is parsed straight into nodes by
/// ``CanopyCore/NodeBuilder`` (no intermediate ``CanopyCore/JSONValue``) for hellos, control
/// messages, responses and `d` pushes. Merges, revocations, unknown actions and data the fast
/// builder declines (keys it does not accept, very large strings) are read through a
/// ``CanopyCore/JSONValue`` instead, because the fast builder drops `null` members, which a merge
/// needs. A `null` or missing `d` is ``CanopyCore/Node/empty``.
package enum ServerEvent: Sendable {
    /// Control `h`: the handshake.
    case hello(ServerHello)
    /// Control `r`: reconnect to `host` (reset / redirect).
    case reset(host: String)
    /// Control `s`: the server closes the connection for good; clients do not reconnect.
    case shutdown(reason: String)
    /// Control `o`: the answer to ``ClientRequest/ping``.
    case pong
    /// Control `e`: an error message from the server (logged by the JS SDK).
    case serverError(String)
    /// Any other control type (`n`, `a` of the long-poll upgrade, or unknown): kept, not fatal.
    case control(type: String)
    /// The response to the request `id`: `status` `ok` with its data (`{}` for a listen, the value
    /// for a get), or an error status (`permission_denied`, `datastale`, …) with a message string.
    case response(id: Int64, status: String, data: Node)
    /// Push `d`: the value at `path` is now `data` (`.empty` deletes); `tag` for a tagged query.
    case put(path: DatabasePath, data: Node, tag: Int64?)
    /// Push `m`: each relative path below `path` is now its node (`.empty` deletes).
    case merge(path: DatabasePath, changes: [(path: [ChildKey], node: Node)], tag: Int64?)
    /// Push `c`: the listens at `path` were revoked (their access was taken away); `queries` names
    /// the query listens, empty for the default listen.
    case listenRevoked(path: DatabasePath, queries: [QueryParams])
    /// Push `ac`: the credential was revoked (`status` such as `expired_token`).
    case authRevoked(status: String, reason: String)
    /// Push `apc`: the App Check token was revoked.
    case appCheckRevoked(status: String, reason: String)
    /// Push `sd`: security debug text.
    case securityDebug(String)
    /// A push with an action this client does not know (such as `rm`): kept, not fatal.
    case unknown(action: String, body: JSONValue)

    /// Reads a server message.
    ///
    /// - Throws: ``CanopyCore/DatabaseError`` `.invalidJSON` naming what is wrong (not JSON, no
    ///   layer, a response without a status, a push without a path, …), or the error the data's
    ///   validation gives.
    package init(parsing text: String) throws(DatabaseError) {
        var builder = NodeBuilder()
        // The fast reading gives up on anything unusual; the exact one then reads it or names the problem.
        if let frame = try? JSONParser().parse(text, into: &builder), let event = try? Self.read(frame.node) {
            self = event
            return
        }
        let json: JSONValue
        do { json = try JSONValue(parsing: text) } catch let error as DatabaseError {
            throw DatabaseError(.invalidJSON, "Malformed server message: \(error.message)")
        } catch {
            throw DatabaseError(.invalidJSON, "Malformed server message: \(error)")
        }
        guard let event = try Self.read(json) else { throw Self.malformed("unreadable") }
        self = event
    }

    /// The event in `frame`, or `nil` when `frame` is a ``Node`` and the event needs the exact JSON.
    private static func read<T: WireTree>(_ frame: T) throws(DatabaseError) -> ServerEvent? {
        guard let layer = frame.member("t")?.text, let payload = frame.member("d") else {
            throw self.malformed("a message is {\"t\": layer, \"d\": payload}")
        }
        switch layer {
        case "c": return try self.control(payload)
        case "d": return try self.data(payload)
        default: throw self.malformed("unknown layer \"\(layer)\"")
        }
    }

    private static func control<T: WireTree>(_ payload: T) throws(DatabaseError) -> ServerEvent {
        guard let type = payload.member("t")?.text else { throw self.malformed("a control message needs a type \"t\"") }
        let body = payload.member("d")
        switch type {
        case "h":
            guard let body, let timestamp = body.member("ts")?.integer, let session = body.member("s")?.text else {
                throw self.malformed("a hello needs an integer \"ts\" and a session \"s\"")
            }
            let hello = ServerHello(
                timestamp: timestamp, version: body.member("v")?.text ?? "", host: body.member("h")?.text ?? "", session: session)
            return .hello(hello)
        case "r":
            guard let host = body?.text else { throw self.malformed("a reset needs a host string") }
            return .reset(host: host)
        case "s": return .shutdown(reason: body?.text ?? "")
        case "o": return .pong
        case "e": return .serverError(body?.text ?? "")
        default: return .control(type: type)
        }
    }

    private static func data<T: WireTree>(_ payload: T) throws(DatabaseError) -> ServerEvent? {
        let body = payload.member("b")
        if let id = payload.member("r") {
            guard let id = id.integer else { throw self.malformed("a response's \"r\" must be an integer") }
            guard let status = body?.member("s")?.text else { throw self.malformed("the response to \(id) needs a status \"s\"") }
            return .response(id: id, status: status, data: try body?.member("d")?.node(at: .root) ?? .empty)
        }
        guard let action = payload.member("a")?.text else { throw self.malformed("a data message needs \"r\" or an action \"a\"") }
        switch action {
        case "d":
            let path = try self.path(body)
            return .put(path: path, data: try body?.member("d")?.node(at: path) ?? .empty, tag: try self.tag(body))
        case "ac", "apc":
            let status = body?.member("s")?.text ?? ""
            let reason = body?.member("d")?.text ?? ""
            return action == "ac" ? .authRevoked(status: status, reason: reason) : .appCheckRevoked(status: status, reason: reason)
        case "sd":
            return .securityDebug(body?.member("msg")?.text ?? "")
        default:
            // Merges, revocations and unknown actions read the exact JSON.
            guard T.isExact else { return nil }
            return try self.exact(action, body?.json ?? .null)
        }
    }

    private static func exact(_ action: String, _ body: JSONValue) throws(DatabaseError) -> ServerEvent {
        switch action {
        case "m":
            let path = try self.path(body)
            guard let members = body["d"]?.objectValue else { throw self.malformed("a merge needs an object \"d\"") }
            var changes: [(path: [ChildKey], node: Node)] = []
            changes.reserveCapacity(members.count)
            for (key, value) in members {
                let relative = try DatabasePath(validating: key, function: "merge push")
                changes.append((relative.keys, try value.node(at: path.appending(relative))))
            }
            return .merge(path: path, changes: changes, tag: try self.tag(body))
        case "c":
            let queries: [JSONValue]
            switch body["q"] {
            case nil, .null?: queries = []
            case .array(let array)?: queries = array
            case let object?: queries = [object]
            }
            var params: [QueryParams] = []
            for query in queries { params.append(try WireQuery.params(query)) }
            return .listenRevoked(path: try self.path(body), queries: params)
        default:
            return .unknown(action: action, body: body)
        }
    }

    private static func path<T: WireTree>(_ body: T?) throws(DatabaseError) -> DatabasePath {
        guard let text = body?.member("p")?.text else { throw self.malformed("a push needs a path \"p\"") }
        return try DatabasePath(validating: text, function: "server push")
    }

    private static func tag<T: WireTree>(_ body: T?) throws(DatabaseError) -> Int64? {
        guard let tag = body?.member("t") else { return nil }
        guard let t = tag.integer else { throw self.malformed("a push's tag \"t\" must be an integer") }
        return t
    }

    private static func malformed(_ detail: String) -> DatabaseError {
        DatabaseError(.invalidJSON, "Malformed server message: \(detail).")
    }
}

/// A parsed message the reader walks: the fast ``Node`` tree or the exact ``JSONValue``.
private protocol WireTree {
    /// Whether `null` members are kept (a ``Node`` drops them).
    static var isExact: Bool { get }
    /// The member `key` of an object; `nil` when absent, `null` or not an object.
    func member(_ key: String) -> Self?
    var text: String? { get }
    var integer: Int64? { get }
    var json: JSONValue { get }
    /// The data as a node written at `location` (its depth and length count toward the limits).
    func node(at location: DatabasePath) throws(DatabaseError) -> Node
}

extension Node: WireTree {
    static var isExact: Bool { false }
    func member(_ key: String) -> Node? {
        guard case .children = self else { return nil }
        let child = self.child(ChildKey(key))
        return child.isEmpty ? nil : child
    }
    var text: String? { if case .string(let s)? = self.leafValue { return s } else { return nil } }
    var integer: Int64? {
        switch self.leafValue {
        case .int(let i)?: return i
        case .double(let d)?: return Int64(exactly: d)
        default: return nil
        }
    }
    var json: JSONValue { self.exportJSON }
    func node(at location: DatabasePath) -> Node { self }
}

extension JSONValue: WireTree {
    static var isExact: Bool { true }
    func member(_ key: String) -> JSONValue? {
        guard let value = self[key], !value.isNull else { return nil }
        return value
    }
    var text: String? { self.stringValue }
    var integer: Int64? { self.int64Value }
    var json: JSONValue { self }
    func node(at location: DatabasePath) throws(DatabaseError) -> Node {
        var converter = try ValueConverter(function: "server data", location: location.keys.map(\.string))
        return try converter.convert(self).node
    }
}
