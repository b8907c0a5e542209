extension JSONReader {
    /// Reads a string whose opening quote is at `pos`, leaving `pos` after the closing quote.
    ///
    /// Strings without escapes (the common case) become a `String` straight from the input
    /// bytes; the others are decoded into `scratch` first.
    mutating func readString() throws -> String {
        let start = self.pos + 1
        var p = try self.scanPlain(from: start)
        if self.base[p] == UInt8(ascii: "\"") {
            self.pos = p + 1
            return String(decoding: UnsafeBufferPointer(start: self.base + start, count: p - start), as: UTF8.self)
        }
        // Escapes: copy runs of plain bytes and decoded escapes into the scratch buffer.
        var out = self.scratch
        self.scratch = []
        out.removeAll(keepingCapacity: true)
        var runStart = start
        while true {
            out.append(contentsOf: UnsafeBufferPointer(start: self.base + runStart, count: p - runStart))
            if self.base[p] == UInt8(ascii: "\"") { break }
            p = try self.decodeEscape(at: p, into: &out)
            runStart = p
            p = try self.scanPlain(from: p)
        }
        self.pos = p + 1
        let string = String(decoding: out, as: UTF8.self)
        self.scratch = out
        return string
    }

    /// Returns the offset of the first `"` or `\` at or after `p`, validating the bytes before
    /// it: no control characters, valid UTF-8.
    @inline(__always)
    private func scanPlain(from start: Int) throws -> Int {
        var p = start
        while true {
            // Eight bytes at a time while none is '"', '\', a control character or non-ASCII.
            while p &+ 8 <= self.end {
                let x = UnsafeRawPointer(self.base + p).loadUnaligned(as: UInt64.self)
                if Self.needsAttention(x) { break }
                p &+= 8
            }
            guard p < self.end else {
                throw self.error("unexpected end of input inside string", at: self.end)
            }
            let b = self.base[p]
            if b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") { return p }
            if b < 0x20 {
                throw self.error("unescaped control character \(Self.scalarName(UInt32(b))) in string", at: p)
            }
            if b < 0x80 {
                p &+= 1
            } else {
                let next = self.utf8Scan(at: p)
                guard next >= 0 else { throw self.utf8Error(at: ~next) }
                p = next
            }
        }
    }

    /// Whether any byte of `x` is `"`, `\`, below 0x20 or at least 0x80 (may also flag bytes
    /// after a flagged one, which only sends the scanner to its byte-wise path early).
    @inline(__always)
    private static func needsAttention(_ x: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        let quote = x ^ (ones &* 0x22)
        let backslash = x ^ (ones &* 0x5C)
        let zeroQuote = (quote &- ones) & ~quote
        let zeroBackslash = (backslash &- ones) & ~backslash
        let control = x &- (ones &* 0x20)
        return ((zeroQuote | zeroBackslash | control | x) & high) != 0
    }

    /// Decodes the escape whose backslash is at `p` into `out`; returns the offset after it.
    private func decodeEscape(at p: Int, into out: inout [UInt8]) throws -> Int {
        guard p + 1 < self.end else { throw self.error("unexpected end of input inside string", at: self.end) }
        let c = self.base[p + 1]
        switch c {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(c)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try self.hex4(at: p)
            var scalar = UInt32(unit)
            var next = p + 6
            if unit >= 0xDC00, unit <= 0xDFFF {
                throw self.error("lone surrogate \\u\(Self.hex4Name(unit)) (low surrogate without a high surrogate)", at: p)
            }
            if unit >= 0xD800, unit <= 0xDBFF {
                guard next + 1 < self.end, self.base[next] == UInt8(ascii: "\\"), self.base[next + 1] == UInt8(ascii: "u")
                else {
                    throw self.error("lone surrogate \\u\(Self.hex4Name(unit)) (high surrogate not followed by a \\u low surrogate)", at: p)
                }
                let low = try self.hex4(at: next)
                guard low >= 0xDC00, low <= 0xDFFF else {
                    throw self.error(
                        "lone surrogate \\u\(Self.hex4Name(unit)) (followed by \\u\(Self.hex4Name(low)), not a low surrogate)", at: p)
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                next += 6
            }
            Self.appendUTF8(scalar, to: &out)
            return next
        default:
            if c >= 0x20, c < 0x7F {
                throw self.error("invalid escape '\\\(Character(Unicode.Scalar(c)))' in string", at: p)
            }
            throw self.error("invalid escape in string: backslash followed by \(self.describe(at: p + 1))", at: p)
        }
        return p + 2
    }

    /// The four hex digits after the `\u` whose backslash is at `p`.
    private func hex4(at p: Int) throws -> UInt16 {
        var value: UInt16 = 0
        for i in 2..<6 {
            guard p + i < self.end else { throw self.error("unexpected end of input inside string", at: self.end) }
            let c = self.base[p + i]
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
            default: throw self.error("invalid \\u escape: expected 4 hex digits, found \(self.describe(at: p + i))", at: p)
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }

    private static func hex4Name(_ unit: UInt16) -> String {
        String(Self.scalarName(UInt32(unit)).dropFirst(2))
    }

    private static func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            out.append(UInt8(scalar))
        case 0x80..<0x800:
            out.append(UInt8(0xC0 | scalar >> 6))
            out.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | scalar >> 12))
            out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        default:
            out.append(UInt8(0xF0 | scalar >> 18))
            out.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    // MARK: UTF-8

    /// The offset just past the well-formed UTF-8 sequence whose lead byte (≥ 0x80) is at `p`,
    /// or, bitwise negated, the offset of the first byte that makes it ill-formed (Unicode
    /// Table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF).
    @inline(__always)
    func utf8Scan(at p: Int) -> Int {
        var count = 0
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch self.base[p] {
        case 0xC2...0xDF: count = 1
        case 0xE0:
            count = 2
            low = 0xA0
        case 0xE1...0xEC, 0xEE, 0xEF: count = 2
        case 0xED:
            count = 2
            high = 0x9F
        case 0xF0:
            count = 3
            low = 0x90
        case 0xF1...0xF3: count = 3
        case 0xF4:
            count = 3
            high = 0x8F
        default: return ~p
        }
        var q = p + 1
        guard q < self.end, self.base[q] >= low, self.base[q] <= high else { return ~q }
        q += 1
        while q <= p + count {
            guard q < self.end, self.base[q] & 0xC0 == 0x80 else { return ~q }
            q += 1
        }
        return q
    }

    /// The offset after the well-formed UTF-8 sequence at `p`, or `nil`.
    func utf8SequenceEnd(at p: Int) -> Int? {
        let next = self.utf8Scan(at: p)
        return next >= 0 ? next : nil
    }

    @inline(never)
    func utf8Error(at offset: Int) -> DatabaseError {
        if offset >= self.end { return self.error("unexpected end of input inside string", at: self.end) }
        return self.error("invalid UTF-8 byte \(Self.hex(self.base[offset]))", at: offset)
    }
}
