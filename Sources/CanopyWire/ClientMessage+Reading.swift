import CanopyCore

extension ClientMessage {
    /// Reads a message as the server does: a put or a merge in the SDKs' shape straight into its
    /// values (``ClientAction/putValue(path:value:hash:)``, ``ClientAction/mergeValue(path:entries:)``),
    /// anything else as ``init(parsing:)`` does.
    ///
    /// - Throws: ``Malformed``, as ``init(parsing:)``.
    package static func reading(_ text: String) throws(Malformed) -> ClientMessage {
        if let write = Self.fastWrite(text) { return write }
        return try ClientMessage(parsing: text)
    }

    /// `text` read the fast way when it is a put or merge as the SDKs write it; `nil` otherwise
    /// (then ``reading(_:)`` reads it the general way).
    package static func fastWrite(_ text: String) -> ClientMessage? {
        var text = text
        return text.withUTF8 { Self.write(fromJSON: UnsafeRawBufferPointer($0)) }
    }

    /// A put or merge as the SDKs write it, `{"t":"d","d":{"r":ID,"a":"p","b":{"p":PATH,"d":DATA}}}`
    /// (with `"h"` for a transaction's put; `"a":"m"` and an object of relative paths for a
    /// merge), its data built straight into nodes as REST bodies are (``NodeBuilder``), with no
    /// ``JSONValue`` in between: the hot path of writes over WebSocket.
    ///
    /// `nil` for any other message and for anything unusual in a write (members in another
    /// order, unknown or repeated members, a priority or `.info` path, server values, data that
    /// is invalid, too deep or too long at its path, overlapping merge paths): ``init(parsing:)``
    /// reads those, and names what is wrong.
    static func write(fromJSON bytes: UnsafeRawBufferPointer) -> ClientMessage? {
        var reader = JSONMemberReader(bytes)
        do {
            try reader.openObject()
            guard try reader.nextShortKey() == UInt8(ascii: "t"), try reader.string() == "d", try reader.nextShortKey() == UInt8(ascii: "d")
            else { return nil }
            try reader.openObject()
            guard try reader.nextShortKey() == UInt8(ascii: "r"), let id = try reader.int64(),
                try reader.nextShortKey() == UInt8(ascii: "a")
            else { return nil }
            let action = try reader.string()
            guard action == "p" || action == "m", try reader.nextShortKey() == UInt8(ascii: "b") else { return nil }
            try reader.openObject()
            var text: String?
            var data: NodeBuilder.Built?
            var members: [Member]?
            var hash: String?
            while let key = try reader.nextShortKey() {
                switch key {
                case UInt8(ascii: "p") where text == nil:
                    guard let path = try reader.string() else { return nil }
                    text = path
                case UInt8(ascii: "d") where action == "p" && data == nil:
                    data = try reader.node()
                case UInt8(ascii: "d") where action == "m" && members == nil:
                    guard let read = try Self.members(&reader) else { return nil }
                    members = read
                case UInt8(ascii: "h") where action == "p" && hash == nil:
                    guard let value = try reader.string() else { return nil }
                    hash = value
                default:
                    return nil
                }
            }
            // The ends of "d" and of the message, and nothing after them.
            guard try reader.nextShortKey() == nil, try reader.nextShortKey() == nil else { return nil }
            try reader.end()
            // No key holds a dot, so a path with one (`LOCATION/.priority`, `.info`) is left to
            // the general reading.
            guard let text, !text.utf8.contains(UInt8(ascii: ".")) else { return nil }
            let path = try DatabasePath(validating: text, function: "path")
            if let data {
                guard let value = NodeImporter.writeValue(data, location: path.keys) else { return nil }
                return .request(id: id, action: .put(path: path, value: value, hash: hash))
            }
            guard let members, let entries = Self.entries(members, at: path) else { return nil }
            return .request(id: id, action: .merge(path: path, entries: entries))
        } catch {
            return nil
        }
    }

    private typealias Member = (key: String, path: [ChildKey], value: NodeBuilder.Built)

    /// A merge's members: relative paths of valid keys (no `.priority`), each once.
    private static func members(_ reader: inout JSONMemberReader) throws -> [Member]? {
        try reader.openObject()
        var members: [Member] = []
        while let key = try reader.nextKey() {
            guard !key.utf8.contains(UInt8(ascii: ".")), !members.contains(where: { $0.key == key }) else { return nil }
            members.append((key, try UpdateEntries.relativePath(key, function: "update"), try reader.node()))
        }
        return members
    }

    /// A merge's entries at `path`, in the order ``UpdateEntries/entries(_:location:function:)``
    /// gives them; `nil` when a value does not fit at its path or two paths overlap.
    private static func entries(_ members: [Member], at path: DatabasePath) -> [WriteOperation.Entry]? {
        var entries: [WriteOperation.Entry] = []
        entries.reserveCapacity(members.count)
        for member in members.sorted(by: { $0.key < $1.key }) {
            guard let value = NodeImporter.writeValue(member.value, location: path.keys + member.path) else { return nil }
            entries.append(WriteOperation.Entry(path: member.path, value: value))
        }
        if members.contains(where: { $0.path.count > 1 }),
            UpdateEntries.overlap(entries.map { DatabasePath($0.path) }, function: "update") != nil
        {
            return nil
        }
        return entries
    }
}
