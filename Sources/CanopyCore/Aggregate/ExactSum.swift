/// The exact sum of any number of finite doubles, added and taken out in any order: a fixed-point
/// number wide enough for every double (bits 2^-1074 to 2^1023) plus 64 bits of headroom, in two's
/// complement over 35 words (a "long accumulator"). Adding or removing a double touches two words
/// and whatever carry follows (at most the 35), so a running sum that sees billions of changes
/// holds exactly the sum of the doubles present, whatever the order and however much they cancel.
package struct ExactSum {
    static let words = 35
    /// Word `i` holds bits 64·i … 64·i + 63 of the sum scaled by 2^1074; the top bit of the last
    /// word is the sign.
    private var bits = [UInt64](repeating: 0, count: ExactSum.words)

    package init() {}

    /// Adds `value` (finite).
    package mutating func add(_ value: Double) { self.add(value, negate: value.sign == .minus) }

    /// Takes `value` (finite) out.
    package mutating func remove(_ value: Double) { self.add(value, negate: value.sign == .plus) }

    private mutating func add(_ value: Double, negate: Bool) {
        guard value.isFinite, value != 0 else { return }
        let biased = Int(value.exponentBitPattern)
        let significand = value.significandBitPattern | (biased == 0 ? 0 : 1 << 52)
        // value = significand · 2^(max(biased, 1) - 1075), so its lowest bit is bit max(biased, 1) - 1.
        let position = max(biased, 1) - 1
        let word = position >> 6
        let shift = UInt64(position & 63)
        let low = significand << shift
        let high = shift == 0 ? 0 : significand >> (64 - shift)
        self.bits.withUnsafeMutableBufferPointer { bits in
            if negate {
                Self.apply(high, low, at: word, to: bits) { $0.subtractingReportingOverflow($1) }
            } else {
                Self.apply(high, low, at: word, to: bits) { $0.addingReportingOverflow($1) }
            }
        }
    }

    /// Adds `high · 2^64 + low` to `bits` at word `word` (or takes it out, as `step` does: adding or
    /// subtracting two words, with the carry or borrow out), carrying or borrowing into the words
    /// above as far as it goes.
    @inline(__always)
    private static func apply(
        _ high: UInt64, _ low: UInt64, at word: Int, to bits: UnsafeMutableBufferPointer<UInt64>,
        _ step: (UInt64, UInt64) -> (partialValue: UInt64, overflow: Bool)
    ) {
        let (l, c0) = step(bits[word], low)
        bits[word] = l
        // `high` < 2^53: adding the carry (or borrow) to it cannot overflow.
        let (h, c1) = step(bits[word + 1], high &+ (c0 ? 1 : 0))
        bits[word + 1] = h
        var i = word + 2
        var carry = c1
        while carry && i < bits.count {
            (bits[i], carry) = step(bits[i], 1)
            i += 1
        }
    }

    /// The sum as a double-double `hi + lo`: `hi` is the sum rounded to a double (to within the
    /// last of about 106 bits), `lo` about what `hi` leaves out.
    package var doubleDouble: (hi: Double, lo: Double) {
        self.bits.withUnsafeBufferPointer { bits in
            let negative = bits[bits.count - 1] >> 63 == 1
            // The magnitude's words: the value's own, or for a negative value its negation
            // (~x + 1: the +1 carries through the low zero words into the lowest nonzero one).
            var lowest = 0
            if negative {
                while lowest < bits.count && bits[lowest] == 0 { lowest += 1 }
            }
            func magnitude(_ i: Int) -> UInt64 {
                guard negative else { return bits[i] }
                if i < lowest { return 0 }
                return i == lowest ? 0 &- bits[i] : ~bits[i]
            }
            var top = bits.count - 1
            while top >= 0 && magnitude(top) == 0 { top -= 1 }
            if top < 0 { return (0, 0) }
            // The top three words, each as two exact 32-bit halves, smallest first.
            var hi = 0.0
            var lo = 0.0
            for i in max(top - 2, 0)...top {
                let m = magnitude(i)
                if m & 0xFFFF_FFFF != 0 {
                    AggregateSummary.addDD(&hi, &lo, Double(sign: .plus, exponent: 64 * i - 1074, significand: Double(m & 0xFFFF_FFFF)), 0)
                }
                if m >> 32 != 0 {
                    AggregateSummary.addDD(&hi, &lo, Double(sign: .plus, exponent: 64 * i + 32 - 1074, significand: Double(m >> 32)), 0)
                }
            }
            return negative ? (-hi, -lo) : (hi, lo)
        }
    }
}
