import CanopyCore

extension NodeWriter {
    /// Appends the plain JSON of `node`.
    static func append(_ node: Node, to out: inout [UInt8]) {
        switch node {
        case .empty: out.append(contentsOf: "null".utf8)
        default: out.append(contentsOf: NodeWriter.bytes(node, export: false, pretty: false))
        }
    }
}
