import CanopyCore
import NIOCore

/// Server-sent event text: `event: NAME` LF `data: JSON` LF LF (LF only: firebase-admin's parser
/// splits lines on LF).
enum EventRender {
    static let keepAlive = ByteBuffer(string: "event: keep-alive\ndata: null\n\n")

    /// The stream's user token expired: the raw text (no quotes) is what firebase-admin recognizes,
    /// reconnecting with a fresh token.
    static let authRevoked = ByteBuffer(string: "event: auth_revoked\ndata: credential is no longer valid\n\n")

    static func cancel(_ reason: String) -> ByteBuffer {
        var out: [UInt8] = Array("event: cancel\ndata: ".utf8)
        JSONWriter.appendString(reason, to: &out)
        out.append(contentsOf: "\n\n".utf8)
        return ByteBuffer(bytes: out)
    }

    /// `put` of `node` at `path` (relative to the listened location).
    static func put(_ path: some Collection<ChildKey>, _ node: Node) -> [UInt8] {
        var out: [UInt8] = Array(#"event: put"#.utf8)
        out.append(contentsOf: "\ndata: {\"path\":".utf8)
        self.appendPath(path, to: &out)
        out.append(contentsOf: #","data":"#.utf8)
        NodeWriter.append(node, to: &out)
        out.append(contentsOf: "}\n\n".utf8)
        return out
    }

    /// `put` of a JSON value at the listened location (an aggregate's value, nulls kept).
    static func put(_ value: JSONValue) -> [UInt8] {
        Array("event: put\ndata: {\"path\":\"/\",\"data\":\(value.jsonString())}\n\n".utf8)
    }

    /// `patch` at `path` with one member per (relative, possibly multi-segment) key.
    static func patch(_ path: some Collection<ChildKey>, _ members: [(key: String, node: Node)]) -> [UInt8] {
        var out: [UInt8] = Array("event: patch\ndata: {\"path\":".utf8)
        self.appendPath(path, to: &out)
        out.append(contentsOf: #","data":{"#.utf8)
        for (i, member) in members.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.appendString(member.key, to: &out)
            out.append(UInt8(ascii: ":"))
            NodeWriter.append(member.node, to: &out)
        }
        out.append(contentsOf: "}}\n\n".utf8)
        return out
    }

    static func appendPath(_ path: some Collection<ChildKey>, to out: inout [UInt8]) {
        JSONWriter.appendString(self.pathString(path), to: &out)
    }

    static func pathString(_ path: some Collection<ChildKey>) -> String {
        path.isEmpty ? "/" : "/" + path.map(\.string).joined(separator: "/")
    }

    /// The event a stream on `location` gets for `write`, given the tree after it; `nil` when
    /// the write does not touch the location. The work is proportional to the written data
    /// inside the location.
    static func event(for write: WriteOperation, root: Node, at location: DatabasePath) -> [UInt8]? {
        self.event(for: write.change(at: location, root: root))
    }

    /// The event taking a query stream's client from the window it was sent to the new one, for
    /// one write that changed the window (see ``ViewChange/locationChange``).
    static func event(for change: ViewChange) -> [UInt8]? {
        self.event(for: change.locationChange)
    }

    /// A `put` or a `patch` (members keyed by their relative paths), or `nil`.
    private static func event(for change: LocationChange?) -> [UInt8]? {
        switch change {
        case nil: return nil
        case .put(let path, let node)?: return self.put(path, node)
        case .patch(let path, let members)?:
            return self.patch(path, members.map { ($0.path.map(\.string).joined(separator: "/"), $0.node) })
        }
    }
}
