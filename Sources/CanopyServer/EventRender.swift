import CanopyCore
import NIOCore

/// Server-sent event text: `event: NAME` LF `data: JSON` LF LF (LF only: firebase-admin's parser
/// splits lines on LF).
enum EventRender {
    static let keepAlive = ByteBuffer(string: "event: keep-alive\ndata: null\n\n")

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
        let at = write.path
        let isSet = write.entries.count == 1 && write.entries[0].path.isEmpty
        if location.contains(at) {
            // At or below the location.
            let relative = at.keys[location.keys.count...]
            if isSet { return self.put(relative, root.node(at: at.keys)) }
            var members: [(key: String, node: Node)] = []
            for entry in write.entries where !entry.isPriority {
                members.append((entry.path.map(\.string).joined(separator: "/"), root.node(at: at.keys + entry.path)))
            }
            return members.isEmpty ? nil : self.patch(relative, members)
        }
        guard at.contains(location) else { return nil }
        // Above the location: translate into it.
        if isSet { return self.put(EmptyCollection(), root.node(at: location.keys)) }
        let below = location.keys[at.keys.count...]
        var members: [(key: [ChildKey], node: Node)] = []
        for entry in write.entries where !entry.isPriority {
            if entry.path.count <= below.count {
                if entry.path.elementsEqual(below.prefix(entry.path.count)) {
                    // The entry replaces the location or an ancestor of it.
                    return self.put(EmptyCollection(), root.node(at: location.keys))
                }
            } else if entry.path.prefix(below.count).elementsEqual(below) {
                let inside = Array(entry.path[below.count...])
                members.append((inside, root.node(at: location.keys + inside)))
            }
        }
        if members.isEmpty { return nil }
        if members.count == 1 { return self.put(members[0].key, members[0].node) }
        return self.patch(EmptyCollection(), members.map { ($0.key.map(\.string).joined(separator: "/"), $0.node) })
    }

    /// The event taking a query stream's client from the window it was sent to the new one, for
    /// one write that changed the window: a `patch` at the location with the children that
    /// entered or changed (their new data) and then those that left (`null`), each group in key
    /// order; a `put` of the whole window when it was or became empty.
    static func event(for change: ViewChange) -> [UInt8]? {
        guard case .children = change.old, case .children = change.new else {
            return change.old == change.new ? nil : self.put(EmptyCollection(), change.new)
        }
        var shown: [(key: ChildKey, node: Node)] = change.changes.added
        shown.append(contentsOf: change.changes.changed.lazy.map { ($0.key, $0.new) })
        shown.sort { ChildKey.compare($0.key, $1.key) < 0 }
        var members = shown.map { (key: $0.key.string, node: $0.node) }
        members.append(contentsOf: change.changes.removed.lazy.map { (key: $0.key.string, node: Node.empty) })
        return members.isEmpty ? nil : self.patch(EmptyCollection(), members)
    }
}
