package import CanopyCore

/// The JSON texts the server sends, written straight to bytes: a push's data is rendered once and
/// shared by every connection it goes to.
package enum ServerMessage {
    /// The hello: server time in integer milliseconds, protocol `"5"`, the host the client used
    /// (from its `Host` header), and the session id it sends back as `ls` when it reconnects.
    package static func hello(timestamp: Int64, host: String, session: String) -> [UInt8] {
        var out = Array(#"{"t":"c","d":{"t":"h","d":{"ts":"#.utf8)
        JSONWriter.appendInt(timestamp, to: &out)
        out += #","v":"5","h":"#.utf8
        JSONWriter.appendString(host, to: &out)
        out += #","s":"#.utf8
        JSONWriter.appendString(session, to: &out)
        out += "}}}".utf8
        return out
    }

    /// A control `r`, sent instead of the hello: the namespace is served at `host` (`HOST:PORT`);
    /// the SDKs store it, close, and reconnect there at once.
    package static func redirect(to host: String) -> [UInt8] {
        var out = Array(#"{"t":"c","d":{"t":"r","d":"#.utf8)
        JSONWriter.appendString(host, to: &out)
        out += "}}".utf8
        return out
    }

    /// The answer to a control ping.
    package static let pong = Array(#"{"t":"c","d":{"t":"o","d":{}}}"#.utf8)

    /// A control `s`: the server shuts this connection down for good (clients do not reconnect).
    package static func shutdown(reason: String) -> [UInt8] {
        var out = Array(#"{"t":"c","d":{"t":"s","d":"#.utf8)
        JSONWriter.appendString(reason, to: &out)
        out += "}}".utf8
        return out
    }

    /// A response: `status` `ok` with `data` (JSON text), or an error status with a message.
    package static func response(id: Int64, status: String, data: some Collection<UInt8>) -> [UInt8] {
        self.response(id: id, status: status, capacity: data.count) { $0.append(contentsOf: data) }
    }

    /// A response whose data `writeData` appends (a large value written once, in place).
    package static func response(id: Int64, status: String, capacity: Int = 0, writeData: (inout [UInt8]) -> Void) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(40 + status.utf8.count + capacity)
        self.append(#"{"t":"d","d":{"r":"#, to: &out)
        JSONWriter.appendInt(id, to: &out)
        self.append(#","b":{"s":"#, to: &out)
        JSONWriter.appendString(status, to: &out)
        self.append(#","d":"#, to: &out)
        writeData(&out)
        self.append("}}}", to: &out)
        return out
    }

    /// `ok` with an empty string (writes, onDisconnect, stats, auth): the answer to nearly every
    /// request, so written with no escaping and one allocation.
    package static func ok(id: Int64) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        self.append(#"{"t":"d","d":{"r":"#, to: &out)
        JSONWriter.appendInt(id, to: &out)
        self.append(#","b":{"s":"ok","d":""}}}"#, to: &out)
        return out
    }

    /// `ok` for a listen: its data must be an object.
    package static func listenOK(id: Int64) -> [UInt8] { self.response(id: id, status: "ok", data: "{}".utf8) }

    /// `ok` for a listen on a query the rules have no `.indexOn` for: `{"w": ["no_index"]}`, the
    /// warning the SDKs log.
    package static func listenOKUnindexed(id: Int64) -> [UInt8] {
        self.response(id: id, status: "ok", data: #"{"w":["no_index"]}"#.utf8)
    }

    /// An error status with a message (the data of an error is always a string).
    package static func failure(id: Int64, status: String, message: String) -> [UInt8] {
        var text: [UInt8] = []
        JSONWriter.appendString(message, to: &text)
        return self.response(id: id, status: status, data: text)
    }

    /// A data push `d`: the value at `path` (deeper than a listen's path, or the listen's path itself)
    /// is now `data` (JSON text, `null` to delete); `tag` for a tagged query listen.
    package static func put(path: DatabasePath, data: some Collection<UInt8>, tag: Int64? = nil) -> [UInt8] {
        self.push(action: "d", path: path, data: data, tag: tag)
    }

    /// A merge push `m`: `data` is an object whose keys are paths relative to `path`.
    package static func merge(path: DatabasePath, data: some Collection<UInt8>, tag: Int64? = nil) -> [UInt8] {
        self.push(action: "m", path: path, data: data, tag: tag)
    }

    /// A data push `d` whose data `writeData` appends (a large value written once, in place).
    package static func put(path: DatabasePath, tag: Int64? = nil, writeData: (inout [UInt8]) -> Void) -> [UInt8] {
        self.push(action: "d", path: path, capacity: 0, tag: tag, writeData: writeData)
    }

    private static func push(action: StaticString, path: DatabasePath, data: some Collection<UInt8>, tag: Int64?) -> [UInt8] {
        self.push(action: action, path: path, capacity: data.count, tag: tag) { $0.append(contentsOf: data) }
    }

    private static func push(
        action: StaticString, path: DatabasePath, capacity: Int, tag: Int64?, writeData: (inout [UInt8]) -> Void
    ) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(48 + capacity)
        self.append(#"{"t":"d","d":{"a":""#, to: &out)
        self.append(action, to: &out)
        self.append(#"","b":{"p":"#, to: &out)
        JSONWriter.appendString(self.wirePath(path), to: &out)
        self.append(#","d":"#, to: &out)
        writeData(&out)
        if let tag {
            self.append(#","t":"#, to: &out)
            JSONWriter.appendInt(tag, to: &out)
        }
        self.append("}}}", to: &out)
        return out
    }

    /// Appends the bytes of a literal (no walk over a string's UTF-8 view).
    private static func append(_ text: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A listen revoked `c` (its access was taken away): `query` for a query listen (JS expects an
    /// array of query objects).
    package static func revoke(path: DatabasePath, query: QueryParams?) -> [UInt8] {
        var body: [String: JSONValue] = ["p": .string(self.wirePath(path))]
        if let query { body["q"] = .array([WireQuery.object(query)]) }
        return Array(#"{"t":"d","d":{"a":"c","b":"#.utf8) + JSONWriter.bytes(.object(body)) + Array("}}".utf8)
    }

    /// Auth revoked `ac` (the token expired or is no longer valid): clients drop it and reconnect.
    package static func authRevoked(status: String, reason: String) -> [UInt8] {
        Array(#"{"t":"d","d":{"a":"ac","b":"#.utf8) + JSONWriter.bytes(["s": .string(status), "d": .string(reason)]) + Array("}}".utf8)
    }

    /// A path as the server writes it: keys joined by `/` with no leading slash, `/` for the root
    /// (clients drop empty segments, so both read back as the same path).
    package static func wirePath(_ path: DatabasePath) -> String {
        path.isRoot ? "/" : path.keys.map(\.string).joined(separator: "/")
    }
}
