import CanopyCore
import CanopyWire

/// ETags: the base64 SHA-1 of a location's canonical JSON (keys in order, priorities included),
/// or the literal `null_etag` for an empty location.
enum ETag {
    static let null = "null_etag"

    static func of(_ node: Node) -> String {
        if node.isEmpty { return self.null }
        return SHA1Base64.of(NodeWriter.bytes(node, export: true, pretty: false))
    }
}
