package import CanopyCore

/// The binary encoding of one ``WriteOperation`` (see StorageFormat.md, "Write-operation
/// encoding"): what the journal appends for every write. One key table spans the whole write.
package enum WriteCodec {
    static let requiresExistingNodeFlag: UInt8 = 0x01
    static let timestampKind: UInt8 = 0
    static let incrementKind: UInt8 = 1

    package static func encode(_ write: WriteOperation, into writer: inout ByteWriter) {
        writer.append(write.requiresExistingNode ? Self.requiresExistingNodeFlag : 0)
        Self.encodePath(write.path.keys, into: &writer)
        writer.appendVarint(write.entries.count)
        var encoder = NodeEncoder()
        for entry in write.entries {
            Self.encodePath(entry.path, into: &writer)
            encoder.encode(entry.value.node, into: &writer)
            writer.appendVarint(entry.value.placeholders.count)
            for placeholder in entry.value.placeholders {
                let flag: UInt8 = placeholder.isPriority ? 1 : 0
                switch placeholder.value {
                case .timestamp:
                    writer.append(Self.timestampKind << 1 | flag)
                    Self.encodePath(placeholder.path, into: &writer)
                case .increment(let delta):
                    writer.append(Self.incrementKind << 1 | flag)
                    Self.encodePath(placeholder.path, into: &writer)
                    NodeEncoder.encodeLeaf(delta, into: &writer)
                }
            }
        }
    }

    package static func decode(from reader: inout ByteReader) throws(CodecError) -> WriteOperation {
        let flagsAt = reader.offset
        let flags = try reader.readU8()
        guard flags & ~Self.requiresExistingNodeFlag == 0 else { throw reader.error("unknown write flags \(flags)", at: flagsAt) }
        let path = try Self.decodePath(&reader)
        let countAt = reader.offset
        let entryCount = try reader.readLength()
        // An entry takes at least 3 bytes: path length, node tag, placeholder count.
        guard entryCount <= reader.remaining / 3 else {
            throw reader.error("\(entryCount) entries cannot fit in the \(reader.remaining) remaining bytes", at: countAt)
        }
        var decoder = NodeDecoder()
        var entries: [WriteOperation.Entry] = []
        entries.reserveCapacity(entryCount)
        for _ in 0..<entryCount {
            let entryPath = try Self.decodePath(&reader)
            let node = try decoder.decode(&reader)
            let placeholdersAt = reader.offset
            let placeholderCount = try reader.readLength()
            // A placeholder takes at least 2 bytes: kind and path length.
            guard placeholderCount <= reader.remaining / 2 else {
                throw reader.error(
                    "\(placeholderCount) placeholders cannot fit in the \(reader.remaining) remaining bytes", at: placeholdersAt)
            }
            var placeholders: [WriteValue.Placeholder] = []
            placeholders.reserveCapacity(placeholderCount)
            for _ in 0..<placeholderCount {
                let kindAt = reader.offset
                let kind = try reader.readU8()
                let placeholderPath = try Self.decodePath(&reader)
                let value: ServerValuePlaceholder
                switch kind >> 1 {
                case Self.timestampKind: value = .timestamp
                case Self.incrementKind: value = .increment(try NodeDecoder.decodeLeaf(&reader))
                default: throw reader.error("unknown server value kind \(kind)", at: kindAt)
                }
                placeholders.append(WriteValue.Placeholder(path: placeholderPath, value: value, isPriority: kind & 1 != 0))
            }
            entries.append(WriteOperation.Entry(path: entryPath, value: WriteValue(node: node, placeholders: placeholders)))
        }
        return WriteOperation(path: DatabasePath(path), entries: entries, requiresExistingNode: flags & Self.requiresExistingNodeFlag != 0)
    }

    /// A varint key count, then each key as a varint byte length and its UTF-8 bytes.
    static func encodePath(_ keys: [ChildKey], into writer: inout ByteWriter) {
        writer.appendVarint(keys.count)
        for key in keys { writer.appendString(key.string) }
    }

    static func decodePath(_ reader: inout ByteReader) throws(CodecError) -> [ChildKey] {
        let countAt = reader.offset
        let count = try reader.readLength()
        guard count <= reader.remaining / 2 else {
            throw reader.error("\(count) path keys cannot fit in the \(reader.remaining) remaining bytes", at: countAt)
        }
        var keys: [ChildKey] = []
        keys.reserveCapacity(count)
        for _ in 0..<count {
            let keyAt = reader.offset
            let string = try reader.readString()
            guard !string.isEmpty else { throw reader.error("an empty key in a path", at: keyAt) }
            keys.append(ChildKey(string))
        }
        return keys
    }
}
