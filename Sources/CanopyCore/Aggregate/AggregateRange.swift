/// A range of an ``AggregateIndex`` (start and end bounds, no limit) whose summary the index keeps
/// up to date as children change: a child that leaves the range is taken out of it, one that
/// enters is added, in O(1) (see ``AggregateIndex/track(_:minMax:node:)``). Integers are summed
/// exactly (as in every ``AggregateSummary``) and so are doubles (in an ``ExactSum``), so the
/// summary never drifts however many changes it sees.
package final class AggregateRange {
    let start: QueryBound?
    let end: QueryBound?
    let startRank: SortRank?
    let endRank: SortRank?
    /// Whether the minimum and maximum are kept (else they are `nil`).
    let minMax: Bool
    // Unchecked exclusivity: a range is only touched by its index's owner, on one thread, and
    // never re-entrantly, so the dynamic checks (on every changed child) cannot fail.
    /// The counts, the integer sum, the minimum and the maximum (not the double sum: ``doubleSum``).
    @exclusivity(unchecked) private var counts = AggregateSummary()
    /// The exact sum of the double fields in the range.
    @exclusivity(unchecked) private var doubleSum = ExactSum()
    /// Whether a removed child was the minimum or maximum (find them again before reading).
    @exclusivity(unchecked) private(set) var stale = false
    /// Whether the summary may have changed since ``takeChanged()``.
    @exclusivity(unchecked) private var changed = false

    init(start: QueryBound?, end: QueryBound?, minMax: Bool) {
        self.start = start
        self.end = end
        self.startRank = start.map { SortRank($0.value) }
        self.endRank = end.map { SortRank($0.value) }
        self.minMax = minMax
    }

    /// The summary as last updated (read it with ``AggregateIndex/summary(of:)``, which first
    /// finds a minimum or maximum that went out again).
    package var summary: AggregateSummary {
        var summary = self.counts
        (summary.hi, summary.lo) = summary.doubles == 0 ? (0, 0) : self.doubleSum.doubleDouble
        return summary
    }

    /// Starts again from `summary` (its double sum as given).
    func reset(to summary: AggregateSummary) {
        self.counts = summary
        self.doubleSum = ExactSum()
        self.doubleSum.add(summary.hi)
        self.doubleSum.add(summary.lo)
        self.stale = false
    }

    /// Sets the minimum and maximum found again after ``stale``.
    func setMinMax(_ min: AggregateNumber?, _ max: AggregateNumber?) {
        self.counts.min = min
        self.counts.max = max
        self.stale = false
    }

    /// Whether the entry lies in the range.
    @inline(__always)
    func contains(_ key: AggregateTreeKey) -> Bool {
        if let start = self.start, let rank = self.startRank {
            let c = key.compare(to: start, rank: rank)
            if start.inclusive ? c < 0 : c <= 0 { return false }
        }
        if let end = self.end, let rank = self.endRank {
            let c = key.compare(to: end, rank: rank)
            return end.inclusive ? c <= 0 : c < 0
        }
        return true
    }

    /// Takes out a child of the range whose field is `value`.
    func remove(_ value: AggregateNumber?) {
        if self.counts.remove(value) && self.minMax { self.stale = true }
        if case .double(let d)? = value { self.doubleSum.remove(d) }
        self.changed = true
    }

    /// Adds a child of the range whose field is `value`.
    func add(_ value: AggregateNumber?) {
        self.counts.addCounts(value)
        if case .double(let d)? = value { self.doubleSum.add(d) }
        if self.minMax, let value { self.counts.mergeMinMax(value, value) }
        self.changed = true
    }

    /// Whether a child entered or left the range since the last call (if not, its summary is the
    /// same).
    package func takeChanged() -> Bool {
        defer { self.changed = false }
        return self.changed
    }
}
