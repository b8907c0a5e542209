import CanopyCore

extension NodeWriter {
    /// Appends the plain JSON of `node` (`null` for no data).
    static func append(_ node: Node, to out: inout [UInt8]) {
        NodeWriter.append(node, to: &out, export: false)
    }
}
