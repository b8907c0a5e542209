package import CanopyCore

/// The binary encoding of one ``Node`` (see StorageFormat.md, "Node encoding").
///
/// Each call is self-contained: the key table starts empty. Decoding checks everything a node
/// relies on (keys strictly ascending in key order, no empty child, valid UTF-8, bounded depth)
/// and never traps on bad input.
package enum NodeCodec {
    package static func encode(_ node: Node, into writer: inout ByteWriter) {
        var encoder = NodeEncoder()
        encoder.encode(node, into: &writer)
    }

    package static func decode(from reader: inout ByteReader) throws(CodecError) -> Node {
        var decoder = NodeDecoder()
        return try decoder.decode(&reader)
    }
}
