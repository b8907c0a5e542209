extension JSONWriter {
    /// Appends `d` as JavaScript's `Number.prototype.toString` writes it: the shortest digits
    /// that read back as `d`, in plain notation when the decimal exponent is in −6 … 20
    /// (`5` for `5.0`, `100000000000000000000` for `1e20`, `0.000001`), otherwise in exponent
    /// notation (`1e+21`, `1.5e-7`). `-0.0` is written `0`.
    ///
    /// One deviation keeps values exact through a parse: integral values of magnitude in
    /// 2^53 ..< 2^63 are written with all their digits (`1152921504606846976` for 2^60, where
    /// JavaScript writes `1152921504606847000`); JSON readers that use doubles read the same
    /// number either way.
    ///
    /// - Precondition: `d` is finite (JSON has no NaN or Infinity).
    package static func appendDouble(_ d: Double, to out: inout [UInt8]) {
        precondition(d.isFinite, "JSON cannot represent \(d)")
        if d == 0 {
            out.append(UInt8(ascii: "0"))
            return
        }
        // Integral values below 2^63 are written with all their digits, which read back as an
        // `Int64` of exactly the same value. Below 2^53 these are also JavaScript's digits; from
        // 2^53 on JavaScript pads the shortest digits with zeros (2^60 → 1152921504606847000),
        // which would read back as a *different* `Int64`, so we deviate there.
        if d.magnitude < 9_223_372_036_854_775_808, d == d.rounded(.towardZero) {
            self.appendInt(Int64(d), to: &out)
            return
        }
        if d < 0 { out.append(UInt8(ascii: "-")) }
        // Swift's description gives the shortest round-trip digits (closest to `d`); only the
        // layout differs from JavaScript's, e.g. "1e+16", "1.5e-07", "123.456".
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { digits in
            var count = 0
            var point = -1
            var exponent = 0
            var exponentNegative = false
            var inExponent = false
            for c in d.magnitude.description.utf8 {
                switch c {
                case UInt8(ascii: "."): point = count
                case UInt8(ascii: "e"), UInt8(ascii: "E"): inExponent = true
                case UInt8(ascii: "-"): exponentNegative = true
                case UInt8(ascii: "+"): break
                default:
                    if inExponent {
                        exponent = exponent * 10 + Int(c &- 0x30)
                    } else if count < 32 {
                        digits[count] = c
                        count += 1
                    }
                }
            }
            if point < 0 { point = count }
            // The value is 0.DIGITS × 10^n.
            var n = point + (exponentNegative ? -exponent : exponent)
            var first = 0
            while first < count - 1, digits[first] == UInt8(ascii: "0") {
                first += 1
                n -= 1
            }
            while count - 1 > first, digits[count - 1] == UInt8(ascii: "0") { count -= 1 }
            let significant = UnsafeBufferPointer(rebasing: digits[first..<count])
            self.appendJavaScriptLayout(significant, n: n, to: &out)
        }
    }

    /// Lays out the significant digits `k` of a value 0.`k` × 10^`n` as ECMAScript's
    /// Number::toString does.
    private static func appendJavaScriptLayout(_ k: UnsafeBufferPointer<UInt8>, n: Int, to out: inout [UInt8]) {
        let zero = UInt8(ascii: "0")
        if k.count <= n, n <= 21 {
            out.append(contentsOf: k)
            out.append(contentsOf: repeatElement(zero, count: n - k.count))
        } else if 0 < n, n <= 21 {
            out.append(contentsOf: UnsafeBufferPointer(rebasing: k[..<n]))
            out.append(UInt8(ascii: "."))
            out.append(contentsOf: UnsafeBufferPointer(rebasing: k[n...]))
        } else if -6 < n, n <= 0 {
            out.append(contentsOf: [zero, UInt8(ascii: ".")])
            out.append(contentsOf: repeatElement(zero, count: -n))
            out.append(contentsOf: k)
        } else {
            out.append(k[0])
            if k.count > 1 {
                out.append(UInt8(ascii: "."))
                out.append(contentsOf: UnsafeBufferPointer(rebasing: k[1...]))
            }
            out.append(UInt8(ascii: "e"))
            let e = n - 1
            out.append(e < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
            self.appendDigits(UInt64(e.magnitude), to: &out)
        }
    }
}
