/// Reads a JSON text whose shape the caller expects, one object member at a time: for messages
/// with a fixed envelope, read without building a tree for the envelope.
///
/// The caller opens objects, asks for each member's key, and reads each member's value as what it
/// expects there (a string, an integer, a node), with the same strict rules as ``JSONParser``.
/// Input that is not JSON throws the parser's errors; the caller decides what an unexpected key
/// or value means.
///
/// ```swift
/// try bytes.withUnsafeBytes { bytes in
///     var reader = JSONMemberReader(bytes)
///     try reader.openObject()
///     while let key = try reader.nextKey() { … try reader.string() … }
///     try reader.end()
/// }
/// ```
///
/// The reader points into `bytes`: use it only while they are valid.
package struct JSONMemberReader {
    private var reader: JSONReader
    /// One bit per open object (the innermost is bit 0): set once it has a member.
    private var hasMembers: UInt64 = 0
    private var depth = 0

    /// Objects opened by ``openObject()`` may nest this deep (a value read whole may nest as deep
    /// as ``JSONParser/maxDepth``).
    package static let maxObjectDepth = 64

    /// A reader at the start of `bytes`.
    package init(_ bytes: UnsafeRawBufferPointer) {
        let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(bitPattern: 1)!
        self.reader = JSONReader(base: base, end: bytes.count)
    }

    /// Reads the `{` that opens an object, as the next value.
    package mutating func openObject() throws {
        self.reader.skipWhitespace()
        guard self.reader.pos < self.reader.end, self.reader.base[self.reader.pos] == UInt8(ascii: "{") else {
            throw self.reader.error(self.reader.expectation("'{'"), at: self.reader.pos)
        }
        guard self.depth < Self.maxObjectDepth else { throw self.reader.error("objects nested too deep", at: self.reader.pos) }
        self.reader.pos += 1
        self.depth += 1
        self.hasMembers <<= 1
    }

    /// The key of the innermost open object's next member (its `:` read), or `nil` when the
    /// object ends (its `}` read). After a key, read the member's value before the next key.
    package mutating func nextKey() throws -> String? {
        guard try self.beginMember() else { return nil }
        return try self.reader.readKey()
    }

    /// ``nextKey()`` for an envelope whose keys are one character each, without making a string:
    /// the key's byte when it is written as one ASCII character (`"t"`), `0` for any other key,
    /// including one written with an escape (read whole), `nil` when the object ends.
    package mutating func nextShortKey() throws -> UInt8? {
        guard try self.beginMember() else { return nil }
        self.reader.skipWhitespace()
        let p = self.reader.pos
        let base = self.reader.base
        if p + 3 < self.reader.end, base[p] == UInt8(ascii: "\""), base[p + 2] == UInt8(ascii: "\"") {
            let key = base[p + 1]
            if key >= 0x20, key < 0x80, key != UInt8(ascii: "\""), key != UInt8(ascii: "\\") {
                self.reader.pos = p + 3
                self.reader.skipWhitespace()
                guard self.reader.pos < self.reader.end, base[self.reader.pos] == UInt8(ascii: ":") else {
                    throw self.reader.error(self.reader.expectation("':' after object key"), at: self.reader.pos)
                }
                self.reader.pos += 1
                return key
            }
        }
        _ = try self.reader.readKey()
        return 0
    }

    /// Starts the innermost open object's next member: reads its `,`, or its `}` and returns
    /// `false` when the object ends.
    private mutating func beginMember() throws -> Bool {
        guard self.depth > 0 else { throw self.reader.error("no object is open", at: self.reader.pos) }
        self.reader.skipWhitespace()
        let next: UInt8? = self.reader.pos < self.reader.end ? self.reader.base[self.reader.pos] : nil
        if next == UInt8(ascii: "}") {
            self.reader.pos += 1
            self.depth -= 1
            self.hasMembers >>= 1
            return false
        }
        if self.hasMembers & 1 == 1 {
            guard next == UInt8(ascii: ",") else {
                throw self.reader.error(self.reader.expectation("',' or '}' after object member"), at: self.reader.pos)
            }
            self.reader.pos += 1
        }
        self.hasMembers |= 1
        return true
    }

    /// Reads one value: its text when it is a string, else `nil` (the value is read either way).
    package mutating func string() throws -> String? {
        self.reader.skipWhitespace()
        guard self.reader.pos < self.reader.end, self.reader.base[self.reader.pos] == UInt8(ascii: "\"") else {
            try self.skipValue()
            return nil
        }
        return try self.reader.readString()
    }

    /// Reads one value: the integer when it is an integer literal that fits `Int64`, else `nil`
    /// (the value is read either way).
    package mutating func int64() throws -> Int64? {
        self.reader.skipWhitespace()
        guard self.reader.pos < self.reader.end,
            self.reader.base[self.reader.pos] == UInt8(ascii: "-") || JSONReader.isDigit(self.reader.base[self.reader.pos])
        else {
            try self.skipValue()
            return nil
        }
        if case .int(let i) = try self.reader.readNumber() { return i }
        return nil
    }

    /// Reads one value as a node (``NodeBuilder``: it throws ``NodeBuilder/Fallback`` for what
    /// it leaves to ``ValueConverter``).
    package mutating func node() throws -> NodeBuilder.Built {
        var builder = NodeBuilder()
        return try JSONParser().parseValue(&self.reader, into: &builder)
    }

    /// Reads one value of any kind.
    private mutating func skipValue() throws {
        var builder = JSONValueBuilder()
        _ = try JSONParser().parseValue(&self.reader, into: &builder)
    }

    /// Checks that only whitespace follows.
    package mutating func end() throws {
        self.reader.skipWhitespace()
        if self.reader.pos < self.reader.end {
            throw self.reader.error("unexpected \(self.reader.describe(at: self.reader.pos)) after the JSON value", at: self.reader.pos)
        }
    }
}
