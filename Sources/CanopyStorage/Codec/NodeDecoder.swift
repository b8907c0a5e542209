import CanopyCore

/// Decodes nodes, rebuilding the key table of the matching ``NodeEncoder`` as it goes, and
/// checking every invariant a ``Node`` relies on.
struct NodeDecoder {
    /// Keys added to the table so far: each decoded once and shared by every reference.
    var table: ContiguousArray<ChildKey> = []
    /// Where a key with an elided prefix is assembled.
    private var scratch: [UInt8] = []

    /// A node; `.empty` only where the caller allows it.
    mutating func decode(_ r: inout ByteReader, depth: Int = 0) throws(CodecError) -> Node {
        let start = r.offset
        let tag = try r.readU8()
        switch tag {
        case NodeTag.empty:
            return .empty
        case NodeTag.children:
            let count = try r.readLength()
            return try self.decodeChildren(&r, count: count, priority: nil, depth: depth, at: start)
        case NodeTag.prioritizedLeaf:
            let value = try Self.decodeLeaf(&r)
            let priority = try Self.decodeLeaf(&r)
            return .prioritizedLeaf(Node.PrioritizedLeaf(value: value, priority: priority))
        case NodeTag.prioritizedChildren:
            let priority = try Self.decodeLeaf(&r)
            let count = try r.readLength()
            return try self.decodeChildren(&r, count: count, priority: priority, depth: depth, at: start)
        case NodeTag.smallChildren..<NodeTag.smallInt:
            return try self.decodeChildren(&r, count: Int(tag & 0x3F) &+ 1, priority: nil, depth: depth, at: start)
        default:
            return .leaf(try Self.decodeLeaf(tag: tag, &r, at: start))
        }
    }

    static func decodeLeaf(_ r: inout ByteReader) throws(CodecError) -> LeafValue {
        let start = r.offset
        return try Self.decodeLeaf(tag: try r.readU8(), &r, at: start)
    }

    @inline(__always)
    static func decodeLeaf(tag: UInt8, _ r: inout ByteReader, at start: Int) throws(CodecError) -> LeafValue {
        switch tag {
        case NodeTag.shortString..<NodeTag.smallChildren:
            return .string(try r.readUTF8(Int(tag & 0x3F)))
        case NodeTag.smallInt...:
            return .int(Int64(tag & 0x3F))
        case NodeTag.int:
            return .int(try r.readZigzag())
        case NodeTag.string:
            return .string(try r.readUTF8(try r.readLength()))
        case NodeTag.double:
            return .double(Double(bitPattern: try r.readU64()))
        case NodeTag.falseValue:
            return .bool(false)
        case NodeTag.trueValue:
            return .bool(true)
        default:
            throw r.error("expected a leaf value, found tag \(tag)", at: start)
        }
    }

    private mutating func decodeChildren(
        _ r: inout ByteReader, count: Int, priority: LeafValue?, depth: Int, at start: Int
    ) throws(CodecError) -> Node {
        guard depth < CodecLimits.maxDepth else { throw r.error("nesting deeper than \(CodecLimits.maxDepth) levels", at: start) }
        guard count >= 1 else { throw r.error("a children node with no children", at: start) }
        // Each child takes at least 2 bytes (a key reference and a tag).
        guard count <= r.remaining / 2 else {
            throw r.error("\(count) children cannot fit in the \(r.remaining) remaining bytes", at: start)
        }
        // `ChildrenBuilder` is concrete, so its calls run code specialized in CanopyCore (the
        // generic `SortedMap` initializer, called from here, would not be: Swift 6.3 does not
        // inline `@inlinable package` declarations across modules).
        var builder = ChildrenBuilder(capacity: count)
        var previous: ChildKey? = nil
        for _ in 0..<count {
            let keyStart = r.offset
            let key = try self.decodeKey(&r, previous: previous)
            if let previous, ChildKey.compare(previous, key) >= 0 {
                throw r.error("key \"\(key.string)\" is not after \"\(previous.string)\" in key order", at: keyStart)
            }
            let childStart = r.offset
            let child = try self.decode(&r, depth: depth &+ 1)
            if child.isEmpty { throw r.error("empty child at key \"\(key.string)\"", at: childStart) }
            builder.append(key, child)
            previous = key
        }
        let node = builder.buildSorted()
        return priority == nil ? node : node.withPriority(priority)
    }

    @inline(__always)
    private mutating func decodeKey(_ r: inout ByteReader, previous: ChildKey?) throws(CodecError) -> ChildKey {
        let start = r.offset
        let reference = try r.readVarint()
        let mode = reference & 3
        if mode == KeyReference.tableEntry {
            let index = reference &>> 2
            guard index < UInt64(self.table.count) else {
                throw r.error("key table index \(index) out of range (\(self.table.count) keys)", at: start)
            }
            return self.table[Int(index)]
        }
        guard mode == KeyReference.literal || mode == KeyReference.internedLiteral else {
            throw r.error("invalid key reference kind \(mode)", at: start)
        }
        let prefix = reference &>> 2
        let suffix = try r.readLength()
        // An empty suffix is valid after a longer key ("-2" after "-20"), but a key is never empty.
        guard suffix >= 1 || prefix >= 1 else { throw r.error("an empty key", at: start) }
        let bytes = try r.readBytes(suffix)
        let string: String?
        if prefix == 0 {
            string = makeString(bytes.assumingMemoryBound(to: UInt8.self))
        } else {
            guard let previous else { throw r.error("a key prefix with no previous key", at: start) }
            var previousString = previous.string
            let prefixLength = Int(truncatingIfNeeded: prefix)
            let fits = previousString.withUTF8 { p -> Bool in
                guard prefix <= UInt64(p.count) else { return false }
                self.scratch.removeAll(keepingCapacity: true)
                self.scratch.append(contentsOf: UnsafeBufferPointer(rebasing: p[0..<prefixLength]))
                return true
            }
            guard fits else { throw r.error("key prefix \(prefix) is longer than the previous key", at: start) }
            self.scratch.append(contentsOf: bytes)
            string = self.scratch.withUnsafeBufferPointer { makeString($0) }
        }
        guard let string else { throw r.error("invalid UTF-8 in a key", at: start) }
        let key = ChildKey(string)
        if mode == KeyReference.internedLiteral { self.table.append(key) }
        return key
    }
}
