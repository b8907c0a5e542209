import CanopyCore
import CanopyWire

/// Data as the SDKs read it: export JSON (priorities as `.priority`, a prioritized leaf as
/// `{".value": …, ".priority": …}`), `null` for no data.
enum WireJSON {
    static func bytes(_ node: Node) -> [UInt8] {
        node.isEmpty ? Array("null".utf8) : NodeWriter.bytes(node, export: true, pretty: false)
    }

    /// Appends the data of `node` to a message being written.
    static func append(_ node: Node, to out: inout [UInt8]) {
        NodeWriter.append(node, to: &out, export: true)
    }

    /// The push that brings a listener at `location` up to date with `change`: `d` for a put,
    /// `m` (members keyed by relative paths) for a patch.
    static func push(_ change: LocationChange, at location: DatabasePath, tag: Int64?) -> [UInt8] {
        switch change {
        case .put(let path, let node):
            return ServerMessage.put(path: DatabasePath(location.keys + path), data: self.bytes(node), tag: tag)
        case .patch(let path, let members):
            var data: [UInt8] = [UInt8(ascii: "{")]
            for (i, member) in members.enumerated() {
                if i > 0 { data.append(UInt8(ascii: ",")) }
                JSONWriter.appendString(member.path.map(\.string).joined(separator: "/"), to: &data)
                data.append(UInt8(ascii: ":"))
                data += self.bytes(member.node)
            }
            data.append(UInt8(ascii: "}"))
            return ServerMessage.merge(path: DatabasePath(location.keys + path), data: data, tag: tag)
        }
    }
}
