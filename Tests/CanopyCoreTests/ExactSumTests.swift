import CanopyCore
import CanopyTestSupport
import Testing

/// ``ExactSum`` against exact integer arithmetic: random doubles `m · 2^e` added and taken out in
/// random order must leave exactly the sum of those present (an `Int128` count of 2^-30 units),
/// rounded once; and sums whose terms cancel by hundreds of orders of magnitude stay exact.
struct ExactSumTests {
    @Test("random adds and removals equal the exact sum of the values present, rounded once")
    func randomChanges() {
        var random = SeededGenerator(seed: 11)
        var sum = ExactSum()
        var present: [(value: Double, units: Int128)] = []
        var exact: Int128 = 0
        for step in 0..<4000 {
            if !present.isEmpty && random.int(3) == 0 {
                let (value, units) = present.remove(at: random.int(present.count))
                sum.remove(value)
                exact -= units
            } else {
                // m · 2^e with |m| < 2^20 and -30 <= e <= 30: in units of 2^-30, m · 2^(e + 30), exact.
                let m = Int64(random.int(1 << 21)) - (1 << 20)
                let e = random.int(61) - 30
                let value = Double(sign: .plus, exponent: e, significand: Double(m))
                let units = Int128(m) << (e + 30)
                sum.add(value)
                present.append((value, units))
                exact += units
            }
            let (hi, lo) = sum.doubleDouble
            let expected = Double(sign: .plus, exponent: -30, significand: Double(exact))
            #expect(hi == expected, "step \(step)")
            // The low part is what the rounding left out, exactly (the sum spans under 106 bits).
            let rest = Double(exact - Int128(Double(sign: .plus, exponent: 30, significand: hi)))
            #expect(lo == Double(sign: .plus, exponent: -30, significand: rest), "step \(step)")
        }
    }

    @Test("terms that cancel leave exactly what they do not cancel, whatever their magnitudes")
    func cancellation() {
        var sum = ExactSum()
        #expect(sum.doubleDouble == (0, 0))
        sum.add(1e300)
        sum.add(1e-300)
        sum.add(-1e300)
        #expect(sum.doubleDouble == (1e-300, 0))
        sum.remove(1e-300)
        #expect(sum.doubleDouble == (0, 0))
        // A thousand of the largest double, then all but one out again: no overflow on the way.
        for _ in 0..<1000 { sum.add(.greatestFiniteMagnitude) }
        for _ in 0..<999 { sum.remove(.greatestFiniteMagnitude) }
        #expect(sum.doubleDouble == (.greatestFiniteMagnitude, 0))
        sum.remove(.greatestFiniteMagnitude)
        // Subnormals, and a negative total.
        for _ in 0..<3 { sum.add(-.leastNonzeroMagnitude) }
        #expect(sum.doubleDouble.hi == -3 * .leastNonzeroMagnitude)
        sum.add(3 * .leastNonzeroMagnitude)
        // 2^40 + 1 + 2^-40: more than one double holds, as hi + lo.
        sum.add(0x1p40)
        sum.add(1)
        sum.add(0x1p-40)
        let (hi, lo) = sum.doubleDouble
        #expect(hi == 0x1p40 + 1)
        #expect(lo == 0x1p-40)
        sum.remove(0x1p40)
        sum.remove(1)
        sum.add(-0.0)
        #expect(sum.doubleDouble == (0x1p-40, 0))
    }
}
