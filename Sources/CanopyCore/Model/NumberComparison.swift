/// Exact comparison of the two number representations (`Int64` and `Double`).
///
/// The database compares numbers by value across representations (`1 == 1.0`), without the
/// rounding that converting an `Int64` beyond 2^53 to `Double` would introduce.
package enum NumberComparison {
    /// Returns -1, 0 or 1 as `a` is less than, equal to or greater than `b`. `b` must be finite.
    @inline(__always)
    package static func compare(_ a: Int64, _ b: Double) -> Int {
        // Doubles at or beyond ±2^63 are outside Int64's range.
        if b >= 9_223_372_036_854_775_808.0 { return -1 }
        if b < -9_223_372_036_854_775_808.0 { return 1 }
        let truncated = Int64(b)  // rounds toward zero, exact for |b| < 2^63
        if a < truncated { return -1 }
        if a > truncated { return 1 }
        let fraction = b - Double(truncated)
        if fraction > 0 { return -1 }
        if fraction < 0 { return 1 }
        return 0
    }

    @inline(__always)
    package static func compare(_ a: Double, _ b: Double) -> Int {
        a < b ? -1 : (a > b ? 1 : 0)
    }

    @inline(__always)
    package static func compare(_ a: Int64, _ b: Int64) -> Int {
        a < b ? -1 : (a > b ? 1 : 0)
    }

    /// Hashes a number so that numbers equal by value hash alike: an `Int64` that a `Double`
    /// equals is exactly representable, so both hash that `Double`.
    @inline(__always)
    package static func hash(_ i: Int64, into hasher: inout Hasher) {
        hasher.combine(2)
        if let d = Double(exactly: i) { hasher.combine(d) } else { hasher.combine(i) }
    }

    @inline(__always)
    package static func hash(_ d: Double, into hasher: inout Hasher) {
        hasher.combine(2)
        hasher.combine(d == 0 ? 0.0 : d)
    }
}
