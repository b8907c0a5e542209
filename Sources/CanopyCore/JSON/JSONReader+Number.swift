/// A number as read: an integer literal that fits `Int64`, or any other finite number.
enum JSONNumber: Equatable {
    case int(Int64)
    case double(Double)
}

extension JSONReader {
    /// Reads a number whose first byte (`-` or a digit) is at `pos`.
    ///
    /// Up to 19 significant digits are accumulated exactly; integers that fit become `.int`, and
    /// decimals whose significand and power of ten are both exact in `Double` are computed with
    /// one correctly rounded operation. Everything else goes through the standard library's
    /// correctly rounded `Double(_: String)`.
    mutating func readNumber() throws -> JSONNumber {
        let start = self.pos
        var p = start
        let negative = self.base[p] == UInt8(ascii: "-")
        if negative { p += 1 }
        guard p < self.end, Self.isDigit(self.base[p]) else {
            throw self.error(self.expectationAt(p, "a digit after '-'"), at: p)
        }
        var significand: UInt64 = 0
        var digits = 0  // significant digits seen (leading zeros excluded)
        var scale = 0  // the value is significand × 10^(exponent - scale) when digits <= 19
        if self.base[p] == UInt8(ascii: "0") {
            p += 1
            if p < self.end, Self.isDigit(self.base[p]) {
                throw self.error("leading zeros are not allowed in numbers", at: start)
            }
        } else {
            while p < self.end, Self.isDigit(self.base[p]) {
                if digits < 19 { significand = significand &* 10 &+ UInt64(self.base[p] &- 0x30) }
                digits += 1
                p += 1
            }
            if digits > 19 { scale = 19 - digits }
        }
        var isInteger = true
        if p < self.end, self.base[p] == UInt8(ascii: ".") {
            isInteger = false
            p += 1
            guard p < self.end, Self.isDigit(self.base[p]) else {
                throw self.error(self.expectationAt(p, "a digit after the decimal point"), at: p)
            }
            while p < self.end, Self.isDigit(self.base[p]) {
                let digit = self.base[p] &- 0x30
                if digits == 0, digit == 0 {
                    scale += 1
                } else {
                    if digits < 19 {
                        significand = significand &* 10 &+ UInt64(digit)
                        scale += 1
                    }
                    digits += 1
                }
                p += 1
            }
        }
        var exponent = 0
        if p < self.end, self.base[p] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            p += 1
            var exponentNegative = false
            if p < self.end, self.base[p] == UInt8(ascii: "-") || self.base[p] == UInt8(ascii: "+") {
                exponentNegative = self.base[p] == UInt8(ascii: "-")
                p += 1
            }
            guard p < self.end, Self.isDigit(self.base[p]) else {
                throw self.error(self.expectationAt(p, "a digit in the exponent"), at: p)
            }
            while p < self.end, Self.isDigit(self.base[p]) {
                if exponent < 1_000_000 { exponent = exponent * 10 + Int(self.base[p] &- 0x30) }
                p += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        self.pos = p

        if isInteger, digits <= 19 {
            if !negative, significand <= UInt64(Int64.max) { return .int(Int64(significand)) }
            if negative, significand <= UInt64(Int64.max) + 1 { return .int(Int64(truncatingIfNeeded: 0 &- significand)) }
            let magnitude = Double(significand)  // correctly rounded conversion
            return .double(negative ? -magnitude : magnitude)
        }
        if digits == 0 { return .double(negative ? -0.0 : 0.0) }
        if digits <= 19, significand <= 1 << 53 {
            let power = exponent - scale
            if power >= -22, power <= 22 {
                // Both operands exact: one IEEE operation, correctly rounded (Clinger's fast path).
                var value = Double(significand)
                value = power < 0 ? value / Self.powersOfTen[-power] : value * Self.powersOfTen[power]
                return .double(negative ? -value : value)
            }
        }
        return try self.slowDouble(from: start, to: p)
    }

    /// Converts the literal at `start..<end` with the standard library (strtod).
    @inline(never)
    private func slowDouble(from start: Int, to end: Int) throws -> JSONNumber {
        let literal = String(decoding: UnsafeBufferPointer(start: self.base + start, count: end - start), as: UTF8.self)
        guard let value = Double(literal), value.isFinite else {
            let shown = literal.utf8.count > 40 ? String(literal.prefix(40)) + "…" : literal
            throw self.error("number out of range: \(shown)", at: start)
        }
        return .double(value)
    }

    private func expectationAt(_ p: Int, _ what: String) -> String {
        p >= self.end ? "unexpected end of input, expected \(what)" : "expected \(what), found \(self.describe(at: p))"
    }

    @inline(__always)
    static func isDigit(_ b: UInt8) -> Bool { b &- 0x30 < 10 }

    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]
}
