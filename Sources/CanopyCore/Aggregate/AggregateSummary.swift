/// What an aggregate needs to know about a run of children: how many there are, how many of their
/// fields are numbers, the sum of those numbers, and the smallest and largest of them. Summaries of
/// adjacent runs combine (``add(_:)``), so a tree caching one per subtree answers any range in
/// O(log *n*) subtree summaries.
///
/// How sums stay exact (or reproducible): integers are summed in an `Int128`, exactly, whatever the
/// number of children (no overflow below 2^64 children); doubles are summed apart, as a
/// double-double (an unevaluated sum `hi + lo` of two doubles, each addition by Knuth's TwoSum,
/// about 106 bits of precision). The reported sum is the integer sum plus the double-double
/// rounded once to a `Double`: the correctly rounded exact sum unless the doubles cancel by more
/// than about 50 bits, and so independent of the order in which children were written.
package struct AggregateSummary: Sendable, Equatable {
    /// Children.
    package var count = 0
    /// Children whose field is a number.
    package var numeric = 0
    /// Children whose field is a `Double` (not an integer).
    package var doubles = 0
    /// The exact sum of the integer fields.
    package var intSum: Int128 = 0
    /// The sum of the double fields, as `hi + lo`.
    package var hi = 0.0
    package var lo = 0.0
    package var min: AggregateNumber?
    package var max: AggregateNumber?

    package init() {}

    /// The summary of one child whose field is `value`.
    @inlinable
    package init(_ value: AggregateNumber?) {
        self.count = 1
        guard let value else { return }
        self.numeric = 1
        self.min = value
        self.max = value
        switch value {
        case .int(let i): self.intSum = Int128(i)
        case .double(let d):
            self.doubles = 1
            self.hi = d
        }
    }

    /// Adds a summary of other children (before or after these: order does not matter).
    @inlinable
    package mutating func add(_ other: AggregateSummary) {
        self.count &+= other.count
        guard other.numeric > 0 else { return }
        self.numeric &+= other.numeric
        self.intSum &+= other.intSum
        if other.doubles > 0 {
            self.doubles &+= other.doubles
            Self.addDD(&self.hi, &self.lo, other.hi, other.lo)
        }
        self.mergeMinMax(other.min, other.max)
    }

    /// Adds one child whose field is `value`.
    @inlinable
    package mutating func add(_ value: AggregateNumber?) {
        self.addCounts(value)
        if let value { self.mergeMinMax(value, value) }
    }

    /// Adds one child whose field is `value` to the counts and sums, leaving the minimum and
    /// maximum alone.
    @inlinable
    package mutating func addCounts(_ value: AggregateNumber?) {
        self.count &+= 1
        guard let value else { return }
        self.numeric &+= 1
        switch value {
        case .int(let i): self.intSum &+= Int128(i)
        case .double(let d):
            self.doubles &+= 1
            Self.addDD(&self.hi, &self.lo, d, 0)
        }
    }

    /// Takes one child whose field is `value` out. Returns whether the minimum or maximum may be
    /// stale (the value was one of them): the caller recomputes them from the parts. (Without a
    /// minimum and maximum, as a tracked range that does not keep them, it returns false.)
    @inlinable
    package mutating func remove(_ value: AggregateNumber?) -> Bool {
        self.count &-= 1
        guard let value else { return false }
        self.numeric &-= 1
        switch value {
        case .int(let i): self.intSum &-= Int128(i)
        case .double(let d):
            self.doubles &-= 1
            if self.doubles == 0 {
                self.hi = 0
                self.lo = 0
            } else {
                Self.addDD(&self.hi, &self.lo, -d, 0)
            }
        }
        if self.numeric == 0 {
            self.min = nil
            self.max = nil
            return false
        }
        guard let min = self.min, let max = self.max else { return false }
        return AggregateNumber.compare(value, min) == 0 || AggregateNumber.compare(value, max) == 0
    }

    @inlinable
    mutating func mergeMinMax(_ otherMin: AggregateNumber?, _ otherMax: AggregateNumber?) {
        if let m = otherMin, self.min.map({ AggregateNumber.compare(m, $0) < 0 }) ?? true { self.min = m }
        if let m = otherMax, self.max.map({ AggregateNumber.compare(m, $0) > 0 }) ?? true { self.max = m }
    }

    /// `(hi, lo) += (bhi, blo)` in double-double arithmetic (TwoSum, then renormalised).
    @inlinable
    static func addDD(_ hi: inout Double, _ lo: inout Double, _ bhi: Double, _ blo: Double) {
        let s = hi + bhi
        let bb = s - hi
        let err = (hi - (s - bb)) + (bhi - bb)
        let t = lo + blo + err
        hi = s + t
        lo = t - (hi - s)
    }

    // MARK: - Results

    /// The sum of the numeric fields: an integer when every one is an integer and the sum fits in
    /// 64 bits, else a `Double`. 0 when there are none.
    package var sum: AggregateNumber {
        if self.doubles == 0 && self.intSum >= Int128(Int64.min) && self.intSum <= Int128(Int64.max) {
            return .int(Int64(truncatingIfNeeded: self.intSum))
        }
        return .double(self.total.hi)
    }

    /// The integer and double sums together, as a double-double.
    private var total: (hi: Double, lo: Double) {
        var hi: Double
        var lo: Double
        if self.intSum.magnitude <= 1 << 53 {
            // Exact in one double (and without the generic 128-bit conversions).
            hi = Double(Int64(truncatingIfNeeded: self.intSum))
            lo = 0
        } else {
            hi = Double(self.intSum)
            // `hi` rounds the integer sum; the remainder is exact enough in one more double.
            lo = hi.magnitude < 0x1p127 ? Double(self.intSum - Int128(hi)) : 0
        }
        if self.doubles > 0 { Self.addDD(&hi, &lo, self.hi, self.lo) }
        return (hi, lo)
    }

    /// The mean of the numeric fields, `nil` when there are none.
    package var average: Double? {
        guard self.numeric > 0 else { return nil }
        let (hi, lo) = self.total
        let n = Double(self.numeric)
        let q = hi / n
        // One correction step: the remainder of the division, plus the low part.
        let r = hi.addingProduct(-q, n) + lo
        return q + r / n
    }
}
