import CanopyCore
import CanopyTestSupport
import Testing

/// ``AggregateTree`` against a plain sorted array, with enough elements for several levels of
/// splits, merges and rebalancing: after random insertions, value changes and removals, every
/// element, every partition rank and the summary of random rank ranges match a recount.
struct AggregateTreeTests {
    static func entry(_ i: Int) -> IndexEntry { IndexEntry(sortValue: .leaf(.int(Int64(i % 97))), key: ChildKey("k\(i)")) }

    static func value(_ random: inout SeededGenerator) -> AggregateNumber? {
        switch random.int(5) {
        case 0: return nil
        case 1: return .double(Double(random.int(1000)) / 4 - 100)
        default: return .int(Int64(random.int(2001)) - 1000)
        }
    }

    static func recount(_ values: ArraySlice<AggregateNumber?>) -> AggregateSummary {
        var s = AggregateSummary()
        for v in values { s.add(v) }
        return s
    }

    @Test("inserts, changes and removals keep every subtree summary equal to a recount", arguments: [1, 2, 3] as [UInt64])
    func randomOperations(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        // The model: entries sorted, with values.
        var model: [(entry: IndexEntry, value: AggregateNumber?)] = []
        for i in 0..<3000 where random.int(2) == 0 { model.append((Self.entry(i), Self.value(&random))) }
        model.sort { $0.entry < $1.entry }
        var tree = AggregateTree(sorted: model)
        for step in 0..<6000 {
            let i = random.int(4000)
            let e = Self.entry(i)
            let at = model.firstIndex { !($0.entry < e) } ?? model.count
            let present = at < model.count && model[at].entry == e
            // Phases: grow, shrink (merges), then mixed.
            let removeChance = step < 2000 ? 2 : (step < 4000 ? 8 : 5)
            if random.int(10) < removeChance {
                tree.remove(e)
                if present { model.remove(at: at) }
            } else {
                let v = Self.value(&random)
                tree.set(e, v)
                if present { model[at].value = v } else { model.insert((e, v), at: at) }
            }
            if step % 50 == 0 || step > 5900 {
                #expect(tree.count == model.count, "step \(step)")
                #expect(Self.close(tree.summary, Self.recount(model.map(\.value)[...])), "step \(step): whole")
                for _ in 0..<5 {
                    let lo = random.int(model.count + 1)
                    let hi = lo + random.int(model.count - lo + 1)
                    let s = tree.summary(ranks: lo..<hi)
                    let r = Self.recount(model.map(\.value)[lo..<hi])
                    #expect(Self.close(s, r), "step \(step): ranks \(lo)..<\(hi)")
                }
                let probe = Self.entry(random.int(4000))
                #expect(tree.partitionRank { $0 < probe } == model.filter { $0.entry < probe }.count, "step \(step): partition")
            }
        }
        let elements = tree.elements
        #expect(elements.map(\.entry.key) == model.map(\.entry.key))
        #expect(elements.map(\.value) == model.map(\.value))
    }

    /// Equal counts, integer sums, minimum and maximum; double sums within rounding (they were
    /// added in a different grouping).
    static func close(_ a: AggregateSummary, _ b: AggregateSummary) -> Bool {
        a.count == b.count && a.numeric == b.numeric && a.doubles == b.doubles && a.intSum == b.intSum && a.min == b.min && a.max == b.max
            && abs((a.hi + a.lo) - (b.hi + b.lo)) <= 1e-9 * max(1, abs(b.hi))
    }

    @Test("sums of integers are exact past 64 bits; doubles are summed with compensation")
    func exactSums() {
        var s = AggregateSummary()
        for _ in 0..<4 { s.add(AggregateNumber.int(Int64.max)) }
        #expect(s.intSum == Int128(Int64.max) * 4)
        #expect(s.sum == .double(Double(Int128(Int64.max) * 4)))
        _ = s.remove(.int(Int64.max))
        _ = s.remove(.int(Int64.max))
        _ = s.remove(.int(Int64.max))
        #expect(s.sum == .int(Int64.max))
        var d = AggregateSummary()
        // 1e16 + 1 + -1e16 loses the 1 in plain double arithmetic; the double-double keeps it.
        d.add(.double(1e16))
        d.add(.double(1))
        d.add(.double(-1e16))
        #expect(d.sum == .double(1))
        var tenths = AggregateSummary()
        for _ in 0..<10 { tenths.add(.double(0.1)) }
        #expect(tenths.sum == .double(1))
        #expect(tenths.average == 0.1)
        #expect(AggregateSummary().average == nil)
        #expect(AggregateSummary().sum == .int(0))
    }
}
