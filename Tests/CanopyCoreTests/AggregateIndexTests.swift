import CanopyCore
import CanopyTestSupport
import Testing

/// ``AggregateIndex`` against a brute-force recount: random children (integers, doubles, integers
/// past 2^53, strings, booleans, objects, missing fields, priorities) changed at random, in every
/// order, with tracked ranges (``AggregateIndex/track(_:minMax:)``, kept by O(1) deltas) and
/// untracked ones (read from the tree, with limits). After every change each range's summary
/// must equal a recount of the children the bounds admit, decided by ``QueryBound`` alone, and a
/// range that reports no change must have kept its summary. Without a tree (only ranges without
/// a minimum and maximum tracked), the index must never build one, and one-shot summaries over the
/// location (``AggregateIndex/summary(_:_:of:)``) must equal the recount too.
struct AggregateIndexTests {
    static let field = [ChildKey("f")]

    static func scalar(_ random: inout SeededGenerator) -> LeafValue {
        switch random.int(12) {
        case 0: return .string(["a", "b", "7"][random.int(3)])
        case 1: return .bool(random.int(2) == 0)
        case 2: return .int((1 << 60) + Int64(random.int(5)))  // no Double holds these exactly
        case 3, 4, 5: return .double(Double(random.int(80)) / 8 - 5)
        default: return .int(Int64(random.int(11)) - 5)
        }
    }

    /// A child: an object with `f` (sometimes missing, sometimes an object) and a priority, or a leaf.
    static func child(_ random: inout SeededGenerator) -> Node {
        if random.int(8) == 0 { return .leaf(Self.scalar(&random)) }
        var node = Node.empty
        switch random.int(8) {
        case 0: break
        case 1: node.setChild(ChildKey("f"), to: Node.empty.setting(.leaf(.int(1)), at: [ChildKey("x")][...]))
        default: node.setChild(ChildKey("f"), to: .leaf(Self.scalar(&random)))
        }
        node.setChild(ChildKey("g"), to: .leaf(.int(Int64(random.int(3)))))
        if random.int(3) == 0 {
            let priority: LeafValue = random.int(2) == 0 ? .int(Int64(random.int(3))) : .string(["p", "q"][random.int(2)])
            node = node.withPriority(priority)
        }
        return node
    }

    static func bound(_ random: inout SeededGenerator, index: QueryIndex) -> QueryBound? {
        if random.int(4) == 0 { return nil }
        let keys: [QueryBound.Key] = [.min, .max, .key(ChildKey("k\(random.int(30))"))]
        let key = keys[random.int(3)]
        if case .key = index { return QueryBound(value: nil, key: key, inclusive: random.int(2) == 0) }
        let value: LeafValue? = random.int(6) == 0 ? nil : Self.scalar(&random)
        return QueryBound(value: value, key: key, inclusive: random.int(2) == 0)
    }

    typealias Entry = (entry: IndexEntry, value: AggregateNumber?)

    /// Every child's index entry and field value, in the order of `index`: sorted once per step
    /// and shared by the recounts of every range (a test's ranges all have its index).
    static func sorted(_ children: [ChildKey: Node], _ index: QueryIndex) -> [Entry] {
        children.map { (key, node) in
            (entry: IndexEntry(sortValue: index.sortValue(of: node), key: key), value: AggregateNumber.of(node, field: Self.field))
        }.sorted { $0.entry < $1.entry }
    }

    /// The summary of the entries `params` admits (its bounds decided by ``QueryBound`` alone).
    static func recount(_ entries: [Entry], _ params: QueryParams, minMax: Bool) -> AggregateSummary {
        var inRange = entries.filter { e in
            !(params.start?.excludesAsStart(e.entry) ?? false) && (params.end?.includesAsEnd(e.entry) ?? true)
        }
        switch params.limit {
        case .first(let n)?: inRange = Array(inRange.prefix(n))
        case .last(let n)?: inRange = Array(inRange.suffix(n))
        case nil: break
        }
        var summary = AggregateSummary()
        for e in inRange { summary.add(e.value) }
        if !minMax {
            summary.min = nil
            summary.max = nil
        }
        return summary
    }

    /// Equal counts and integer sums, double sums within rounding, and minimum and maximum equal
    /// in value (an integer and a double of one value tie: which of them is reported depends on
    /// the order they came in).
    static func same(_ a: AggregateSummary, _ b: AggregateSummary) -> Bool {
        func equal(_ x: AggregateNumber?, _ y: AggregateNumber?) -> Bool {
            switch (x, y) {
            case (nil, nil): return true
            case (let x?, let y?): return AggregateNumber.compare(x, y) == 0
            default: return false
            }
        }
        return a.count == b.count && a.numeric == b.numeric && a.doubles == b.doubles && a.intSum == b.intSum && equal(a.min, b.min)
            && equal(a.max, b.max) && abs((a.hi + a.lo) - (b.hi + b.lo)) <= 1e-9 * max(1, abs(b.hi))
    }

    @Test(
        "tracked and untracked ranges equal a recount after every change, in every order, with and without a tree",
        arguments: [QueryIndex.child([ChildKey("f")]), .value, .key, .priority, .child([ChildKey("g")])], [true, false])
    func randomChanges(index: QueryIndex, withTree: Bool) async throws {
        try await onComputeThreads { self.randomChangesScenario(index: index, withTree: withTree) }
    }

    func randomChangesScenario(index: QueryIndex, withTree: Bool) {
        var random = SeededGenerator(seed: 7)
        var children: [ChildKey: Node] = [:]
        for i in 0..<240 where random.int(2) == 0 { children[ChildKey("k\(i % 30)-\(i)")] = Self.child(&random) }
        var location = Node.empty
        for (key, node) in children { location.setChild(key, to: node) }
        let indexKey = AggregateIndex.Key(index: index, field: Self.field)
        let aggregate = AggregateIndex(indexKey, node: location, withTree: withTree)
        var tracked: [(params: QueryParams, minMax: Bool, range: AggregateRange)] = []
        var untracked: [QueryParams] = []
        for i in 0..<16 {
            var params = QueryParams(index: index, start: Self.bound(&random, index: index), end: Self.bound(&random, index: index))
            if i % 4 == 3 {
                params.limit = random.int(2) == 0 ? .first(random.int(40)) : .last(random.int(40))
                #expect(aggregate.track(params, minMax: true, node: location) == nil)
                untracked.append(params)
            } else {
                let minMax = withTree && random.int(2) == 0
                tracked.append((params, minMax, aggregate.track(params, minMax: minMax, node: location)!))
            }
        }
        var keys = Array(children.keys)
        for step in 0..<700 {
            let key = random.int(5) == 0 ? ChildKey("k\(random.int(30))-new\(step)") : keys[random.int(keys.count)]
            let old = children[key] ?? .empty
            let new = random.int(6) == 0 ? Node.empty : Self.child(&random)
            children[key] = new.isEmpty ? nil : new
            location.setChild(key, to: new)
            if old.isEmpty && !new.isEmpty { keys.append(key) }
            aggregate.update(key: key, old: old, new: new)
            #expect((aggregate.tree != nil) == withTree)
            let entries = Self.sorted(children, index)
            for t in tracked {
                let before = t.range.summary
                let changed = t.range.takeChanged()
                let got = aggregate.summary(of: t.range)
                let expected = Self.recount(entries, t.params, minMax: t.minMax)
                #expect(Self.same(got, expected), "step \(step) \(t.params)")
                #expect(got.sum == expected.sum, "step \(step) \(t.params)")
                if !changed { #expect(Self.same(before, expected), "step \(step): unchanged \(t.params)") }
            }
            if step % 10 == 0 {
                for params in untracked + tracked.map(\.params) {
                    let expected = Self.recount(entries, params, minMax: true)
                    if withTree { #expect(Self.same(aggregate.summary(params), expected), "step \(step)") }
                    #expect(Self.same(AggregateIndex.summary(indexKey, params, of: location), expected), "step \(step) one-shot \(params)")
                }
                for t in tracked {
                    let kept = aggregate.summary(t.params, minMax: t.minMax)
                    #expect(
                        kept.map { Self.same($0, Self.recount(entries, t.params, minMax: t.minMax || withTree)) } ?? false, "step \(step)")
                }
            }
        }
        for t in tracked { aggregate.untrack(t.range) }
        // Tracked ranges with a minimum and maximum kept the tree; built with it, it stays.
        #expect((aggregate.tree != nil) == withTree)
        // An untracked range is no longer kept.
        let first = tracked[0]
        let frozen = first.range.summary
        for (key, node) in children.prefix(50) { aggregate.update(key: key, old: node, new: .empty) }
        #expect(first.range.summary == frozen)
    }

    @Test("the tree is built for the first user that needs it and dropped with the last")
    func treeUsers() {
        var location = Node.empty
        for i in 0..<20 { location.setChild(ChildKey("k\(i)"), to: Node.empty.setting(.leaf(.int(Int64(i))), at: Self.field[...])) }
        let index = AggregateIndex(AggregateIndex.Key(index: .child(Self.field), field: Self.field), node: location, withTree: false)
        let params = QueryParams(index: .child(Self.field), start: QueryBound(value: .int(5), key: .min, inclusive: true), end: nil)
        let plain = index.track(params, minMax: false, node: location)!
        #expect(index.tree == nil)
        #expect(index.summary(of: plain).count == 15)
        #expect(index.summary(of: plain).min == nil)
        // One-shot reads: the tracked range answers (not when a minimum is asked for: it keeps none).
        #expect(index.summary(params, minMax: false)?.count == 15)
        #expect(index.summary(params, minMax: true) == nil)
        let withMinMax = index.track(params, minMax: true, node: location)!
        #expect(index.tree?.count == 20)
        index.retainTree(node: location)
        // The minimum leaves; it is found again in the tree.
        index.update(key: ChildKey("k5"), old: location.child(ChildKey("k5")), new: .empty)
        #expect(index.summary(of: withMinMax).min == .int(6))
        #expect(index.summary(of: withMinMax).count == 14)
        #expect(index.summary(of: plain).count == 14)
        index.untrack(withMinMax)
        #expect(index.tree != nil)
        index.releaseTree()
        #expect(index.tree == nil)
        index.update(key: ChildKey("k6"), old: location.child(ChildKey("k6")), new: .empty)
        #expect(index.summary(of: plain).count == 13)
    }

    @Test("sort values compare as Node.compareValues, exactly, across integers and doubles")
    func sortRanks() {
        let values: [Node] = [
            .empty, .leaf(.bool(false)), .leaf(.bool(true)), .leaf(.int(-3)), .leaf(.double(-2.5)), .leaf(.double(-0.0)),
            .leaf(.int(0)), .leaf(.double(0.5)), .leaf(.int(9_007_199_254_740_993)), .leaf(.double(9_007_199_254_740_992)),
            .leaf(.int(Int64.max)), .leaf(.double(1e300)), .leaf(.string("")), .leaf(.string("a")),
            Node.empty.setting(.leaf(.int(1)), at: [ChildKey("x")][...]),
        ]
        for a in values {
            for b in values {
                for (ka, kb) in [("a", "b"), ("b", "a"), ("a", "a")] {
                    let x = IndexEntry(sortValue: a, key: ChildKey(ka))
                    let y = IndexEntry(sortValue: b, key: ChildKey(kb))
                    var tree = AggregateTree()
                    tree.set(x, .int(1))
                    tree.set(y, .int(2))
                    // Two entries when they differ, in the order of IndexEntry.compare.
                    let elements = tree.elements.map(\.entry)
                    let c = IndexEntry.compare(x, y)
                    #expect(elements.count == (c == 0 ? 1 : 2), "\(a) \(ka) vs \(b) \(kb)")
                    if c != 0 { #expect(IndexEntry.compare(elements[0], elements[1]) < 0, "\(a) \(ka) vs \(b) \(kb)") }
                }
            }
        }
    }
}
