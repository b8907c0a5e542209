import CanopyCore

extension ClientMessage {
    /// Reads a message as the server does: a put in the SDKs' shape straight into its value
    /// (``ClientAction/putValue(path:value:hash:)``), anything else as ``init(parsing:)`` does.
    ///
    /// - Throws: ``Malformed``, as ``init(parsing:)``.
    package static func reading(_ text: String) throws(Malformed) -> ClientMessage {
        var text = text
        if let put = text.withUTF8({ Self.put(fromJSON: UnsafeRawBufferPointer($0)) }) { return put }
        return try ClientMessage(parsing: text)
    }

    /// A put as the SDKs write it, `{"t":"d","d":{"r":ID,"a":"p","b":{"p":PATH,"d":DATA}}}` (with
    /// `"h"` for a transaction), its data built straight into a node as REST bodies are
    /// (``NodeBuilder``), with no ``JSONValue`` in between: the hot path of writes over WebSocket.
    ///
    /// `nil` for any other message and for anything unusual in a put (members in another order,
    /// unknown or repeated members, a priority path, server values, data that is invalid, too deep
    /// or too long at the path): ``init(parsing:)`` reads those, and names what is wrong.
    static func put(fromJSON bytes: UnsafeRawBufferPointer) -> ClientMessage? {
        var reader = JSONMemberReader(bytes)
        do {
            try reader.openObject()
            guard try reader.nextKey() == "t", try reader.string() == "d", try reader.nextKey() == "d" else { return nil }
            try reader.openObject()
            guard try reader.nextKey() == "r", let id = try reader.int64() else { return nil }
            guard try reader.nextKey() == "a", try reader.string() == "p", try reader.nextKey() == "b" else { return nil }
            try reader.openObject()
            var text: String?
            var data: NodeBuilder.Built?
            var hash: String?
            while let key = try reader.nextKey() {
                switch key {
                case "p" where text == nil:
                    guard let path = try reader.string() else { return nil }
                    text = path
                case "d" where data == nil:
                    data = try reader.node()
                case "h" where hash == nil:
                    guard let value = try reader.string() else { return nil }
                    hash = value
                default:
                    return nil
                }
            }
            // The ends of "d" and of the message, and nothing after them.
            guard try reader.nextKey() == nil, try reader.nextKey() == nil else { return nil }
            try reader.end()
            // No key holds a dot, so a path with one (`LOCATION/.priority`, `.info`) is left to
            // the general reading.
            guard let text, !text.utf8.contains(UInt8(ascii: ".")), let data else { return nil }
            let path = try DatabasePath(validating: text, function: "path")
            guard let value = NodeImporter.writeValue(data, location: path.keys) else { return nil }
            return .request(id: id, action: .putValue(path: path, value: value, hash: hash))
        } catch {
            return nil
        }
    }
}
