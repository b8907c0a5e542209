package import CanopyCore

/// One message a client sends, written as its JSON text the way the JS SDK writes it: data requests
/// `{"t":"d","d":{"r":ID,"a":ACTION,"b":BODY}}`, the control ping, and the bare `0` keep-alive.
///
/// Data (`data`, `members`) is passed as JSON text already written (``Node/wireJSON`` and
/// ``WriteValue/wireJSON`` write it), so a value is serialized once. Request ids are the caller's:
/// the server echoes them in its response (``ServerEvent/response(id:status:data:)``).
package struct ClientRequest: Sendable, Equatable {
    /// The message's text (before it is split into frames).
    package let text: String

    /// A message with this exact text.
    package init(text: String) { self.text = text }

    /// The keep-alive: the text frame `0`, sent after 45 s without sending anything. The server
    /// does not answer it.
    package static let keepAlive = ClientRequest(text: "0")

    /// A control ping, answered with ``ServerEvent/pong``.
    package static let ping = ClientRequest(text: #"{"t":"c","d":{"t":"p","d":{}}}"#)

    /// `q`: listen at `path`; `query` (with its `tag`) for a query that filters, `nil` for a default
    /// listen; `hash` is the ``CanopyCore/Node/wireHash`` of the cached data, `""` for none.
    package static func listen(id: Int64, path: DatabasePath, query: QueryParams? = nil, tag: Int64? = nil, hash: String = "")
        -> ClientRequest
    {
        var body = [Self.member("p", path)]
        body += Self.query(query, tag: tag)
        body.append(("h", Self.string(hash)))
        return self.request(id, "q", body)
    }

    /// `n`: unlisten; the same path, query and tag as the listen.
    package static func unlisten(id: Int64, path: DatabasePath, query: QueryParams? = nil, tag: Int64? = nil) -> ClientRequest {
        self.request(id, "n", [Self.member("p", path)] + Self.query(query, tag: tag))
    }

    /// `p`: set the value at `path` to `data` (JSON text; `null` deletes). With `hash`, a transaction's
    /// compare-and-set: the server answers `datastale` when its data's hash differs.
    package static func put(id: Int64, path: DatabasePath, data: [UInt8], hash: String? = nil) -> ClientRequest {
        var body = [Self.member("p", path), ("d", data)]
        if let hash { body.append(("h", Self.string(hash))) }
        return self.request(id, "p", body)
    }

    /// `m`: update; each member's relative path (keys joined by `/`) is set to its JSON text.
    package static func merge(id: Int64, path: DatabasePath, members: [(path: [ChildKey], data: [UInt8])]) -> ClientRequest {
        self.request(id, "m", [Self.member("p", path), ("d", Self.object(members))])
    }

    /// `tm` (a Canopy extension; `canopy serve` answers it, Firebase does not): the merge `members`
    /// at `path`, applied only if each location of `readHashes` still has data with that hash, else
    /// answered `datastale`. A multi-location transaction's commit.
    package static func transactionMerge(
        id: Int64, path: DatabasePath, members: [(path: [ChildKey], data: [UInt8])], readHashes: [(path: DatabasePath, hash: String)]
    ) -> ClientRequest {
        var hashes: [UInt8] = [UInt8(ascii: "{")]
        for (i, read) in readHashes.enumerated() {
            if i > 0 { hashes.append(UInt8(ascii: ",")) }
            JSONWriter.appendString(read.path.string, to: &hashes)
            hashes.append(UInt8(ascii: ":"))
            JSONWriter.appendString(read.hash, to: &hashes)
        }
        hashes.append(UInt8(ascii: "}"))
        return self.request(id, "tm", [Self.member("p", path), ("d", Self.object(members)), ("hs", hashes)])
    }

    /// `g`: read the data at `path` once, filtered by `query` (`.default` for a plain reference).
    package static func get(id: Int64, path: DatabasePath, query: QueryParams = .default) -> ClientRequest {
        self.request(id, "g", [Self.member("p", path), ("q", JSONWriter.bytes(WireQuery.object(query)))])
    }

    /// `o`: set `path` to `data` when this connection closes.
    package static func onDisconnectPut(id: Int64, path: DatabasePath, data: [UInt8]) -> ClientRequest {
        self.request(id, "o", [Self.member("p", path), ("d", data)])
    }

    /// `om`: update `path` with `members` when this connection closes.
    package static func onDisconnectMerge(id: Int64, path: DatabasePath, members: [(path: [ChildKey], data: [UInt8])]) -> ClientRequest {
        self.request(id, "om", [Self.member("p", path), ("d", Self.object(members))])
    }

    /// `oc`: forget the close-time writes at and below `path`.
    package static func onDisconnectCancel(id: Int64, path: DatabasePath) -> ClientRequest {
        self.request(id, "oc", [Self.member("p", path), ("d", Array("null".utf8))])
    }

    /// A write operation as the SDKs send it: a set (one entry at the location) as `p`, a priority
    /// change (one `.priority` entry) as `p` at `LOCATION/.priority`, anything else as `m` keyed by
    /// the entries' relative paths; `onDisconnect` sends `o`/`om` instead. Server values are sent
    /// as placeholders (``WriteValue/wireJSON``). `hash` (a transaction's compare-and-set) goes
    /// with a `p` only.
    ///
    /// The wire has no way to say "only if the node exists" (`requiresExistingNode`): the server
    /// applies a priority to a missing node as it sees fit.
    package static func write(id: Int64, _ operation: WriteOperation, hash: String? = nil, onDisconnect: Bool = false) -> ClientRequest {
        if operation.entries.count == 1, let entry = operation.entries.first, entry.path.count <= 1,
            entry.path.isEmpty || entry.isPriority
        {
            let path = DatabasePath(operation.path.keys + entry.path)
            let data = entry.value.wireJSON
            return onDisconnect
                ? self.onDisconnectPut(id: id, path: path, data: data) : self.put(id: id, path: path, data: data, hash: hash)
        }
        let members = operation.entries.map { (path: $0.path, data: $0.value.wireJSON) }
        return onDisconnect
            ? self.onDisconnectMerge(id: id, path: operation.path, members: members)
            : self.merge(id: id, path: operation.path, members: members)
    }

    /// `auth` with a credential shaped like a JWT (three dot-separated parts), else `gauth` (the
    /// server's admin token, the emulator's `owner`). `authVariable` overrides the rules' `auth`;
    /// `noAuth` sets it to `null`.
    package static func auth(id: Int64, credential: String, authVariable: JSONValue? = nil, noAuth: Bool = false) -> ClientRequest {
        let isJWT = credential.utf8.count(where: { $0 == UInt8(ascii: ".") }) == 2
        var body = [("cred", Self.string(credential))]
        if let authVariable { body.append(("authvar", JSONWriter.bytes(authVariable))) }
        if noAuth { body.append(("noauth", Array("true".utf8))) }
        return self.request(id, isJWT ? "auth" : "gauth", body)
    }

    /// `unauth`: drop the credential.
    package static func unauth(id: Int64) -> ClientRequest { self.request(id, "unauth", []) }

    /// `appcheck`: an App Check token.
    package static func appCheck(id: Int64, token: String) -> ClientRequest {
        self.request(id, "appcheck", [("token", Self.string(token))])
    }

    /// `unappeck` (the JS SDK's spelling): drop the App Check token.
    package static func unAppCheck(id: Int64) -> ClientRequest { self.request(id, "unappeck", []) }

    /// `s`: client statistics, e.g. `["sdk.swift.1-0-0": 1]`.
    package static func stats(id: Int64, counters: [String: Int64]) -> ClientRequest {
        self.request(id, "s", [("c", JSONWriter.bytes(.object(counters.mapValues { .int($0) })))])
    }

    // MARK: - Writing

    private typealias Member = (key: String, json: [UInt8])

    private static func request(_ id: Int64, _ action: String, _ body: [Member]) -> ClientRequest {
        var out = Array(#"{"t":"d","d":{"r":"#.utf8)
        JSONWriter.appendInt(id, to: &out)
        out += #","a":"#.utf8
        JSONWriter.appendString(action, to: &out)
        out += #","b":{"#.utf8
        for (i, member) in body.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.appendString(member.key, to: &out)
            out.append(UInt8(ascii: ":"))
            out += member.json
        }
        out += "}}}".utf8
        return ClientRequest(text: String(decoding: out, as: UTF8.self))
    }

    /// `p` as the JS SDK writes it: `/a/b`, `/` for the root.
    private static func member(_ key: String, _ path: DatabasePath) -> Member { (key, Self.string(path.string)) }

    private static func string(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        JSONWriter.appendString(s, to: &out)
        return out
    }

    private static func query(_ query: QueryParams?, tag: Int64?) -> [Member] {
        guard let query else { return [] }
        var members: [Member] = [("q", JSONWriter.bytes(WireQuery.object(query)))]
        if let tag {
            var t: [UInt8] = []
            JSONWriter.appendInt(tag, to: &t)
            members.append(("t", t))
        }
        return members
    }

    private static func object(_ members: [(path: [ChildKey], data: [UInt8])]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (i, member) in members.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.appendString(member.path.map(\.string).joined(separator: "/"), to: &out)
            out.append(UInt8(ascii: ":"))
            out += member.data
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}
