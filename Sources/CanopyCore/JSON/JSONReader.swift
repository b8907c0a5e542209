/// A cursor over the bytes of one JSON text, with the lexical pieces ``JSONParser`` needs.
///
/// Reads go through an unchecked pointer; every read is guarded by `pos < end` by hand.
struct JSONReader {
    let base: UnsafePointer<UInt8>
    let end: Int
    var pos = 0
    /// Reused buffer for strings with escapes.
    var scratch: [UInt8] = []

    init(base: UnsafePointer<UInt8>, end: Int) {
        self.base = base
        self.end = end
    }

    /// Skips space, tab, LF and CR.
    @inline(__always)
    mutating func skipWhitespace() {
        while self.pos < self.end {
            let b = self.base[self.pos]
            guard b <= 0x20, b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { return }
            self.pos += 1
        }
    }

    /// Reads `"key"` and the `:` after it, at a position where an object key must start.
    mutating func readKey() throws -> String {
        self.skipWhitespace()
        guard self.pos < self.end, self.base[self.pos] == UInt8(ascii: "\"") else {
            if self.pos < self.end, self.base[self.pos] == UInt8(ascii: "}") {
                throw self.error("trailing comma before '}'", at: self.pos)
            }
            throw self.error(self.expectation("'\"' to start an object key"), at: self.pos)
        }
        let key = try self.readString()
        self.skipWhitespace()
        guard self.pos < self.end, self.base[self.pos] == UInt8(ascii: ":") else {
            throw self.error(self.expectation("':' after object key"), at: self.pos)
        }
        self.pos += 1
        return key
    }

    /// Reads `true`, `false` or `null`, whose first byte is at `pos`.
    mutating func readLiteral(_ literal: StaticString) throws {
        let count = literal.utf8CodeUnitCount
        let expected = literal.utf8Start
        for i in 0..<count {
            guard self.pos + i < self.end else {
                throw self.error("unexpected end of input in '\(literal)'", at: self.end)
            }
            guard self.base[self.pos + i] == expected[i] else {
                if i == 0 { throw self.error("unexpected \(self.describe(at: self.pos)), expected a value", at: self.pos) }
                throw self.error("invalid literal, expected '\(literal)'", at: self.pos)
            }
        }
        self.pos += count
    }

    // MARK: Errors

    /// An `invalidJSON` error whose message locates byte `offset` by line, column and offset.
    @inline(never)
    func error(_ message: String, at offset: Int) -> DatabaseError {
        var line = 1
        var column = 1
        for i in 0..<min(offset, self.end) {
            let b = self.base[i]
            if b == 0x0A {
                line += 1
                column = 1
            } else if b & 0xC0 != 0x80 {
                column += 1
            }
        }
        return DatabaseError(.invalidJSON, "Invalid JSON at line \(line), column \(column) (byte \(offset)): \(message)")
    }

    /// "expected X" when there is more input, "unexpected end of input, expected X" at the end.
    @inline(never)
    func expectation(_ what: String) -> String {
        if self.pos >= self.end { return "unexpected end of input, expected \(what)" }
        return "expected \(what), found \(self.describe(at: self.pos))"
    }

    /// Names the character at `offset` for an error message: `'x'`, `U+0001`, `'é'`, or
    /// `invalid UTF-8 byte 0xFF`.
    @inline(never)
    func describe(at offset: Int) -> String {
        guard offset < self.end else { return "end of input" }
        let b = self.base[offset]
        if b >= 0x20, b < 0x7F { return "character '\(Character(Unicode.Scalar(b)))'" }
        if b < 0x80 { return "control character \(Self.scalarName(UInt32(b)))" }
        if let next = self.utf8SequenceEnd(at: offset) {
            let text = String(decoding: UnsafeBufferPointer(start: self.base + offset, count: next - offset), as: UTF8.self)
            return "character '\(text)'"
        }
        return "invalid UTF-8 byte \(Self.hex(b))"
    }

    static func hex(_ b: UInt8) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        return "0x" + String(decoding: [digits[Int(b >> 4)], digits[Int(b & 0xF)]], as: UTF8.self)
    }

    static func scalarName(_ v: UInt32) -> String {
        let hex = String(v, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.utf8.count)) + hex
    }
}
