import CanopyCore
import Foundation

/// B14.index: the aggregate index alone (no database, loop or write path): `updates` random
/// child replacements applied to an ``AggregateIndex`` of `children` children, each followed by
/// the range's summary, as a live aggregate of count, sum and average does per write (its range
/// tracked by the index, without minimum and maximum). The final summary, and a summary read
/// afresh from the tree, must equal a recount. What the data structure costs, against the whole
/// write path in B14.aggregate.
func aggregateIndexAlone(_ name: String, children: Int, _ store: Store) throws -> BenchResult {
    let count = Bench.scaled(children)
    let updates = Bench.scaled(1_000_000) * Bench.repeatUpdates
    var rng = BenchRNG(seed: 14)
    func child(_ score: Int, _ rating: Int) -> Node {
        var node = Node.empty
        node.setChild(ChildKey("score"), to: .leaf(.int(Int64(score))))
        node.setChild(ChildKey("rating"), to: .leaf(.double(Double(rating) / 4)))
        return node
    }
    var keys: [ChildKey] = []
    var nodes: [Node] = []
    var location = Node.empty
    for i in 0..<count {
        let key = ChildKey(paddedKey(UInt8(ascii: "i"), i, digits: 7))
        let node = child(rng.next(below: 1_000_000), rng.next(below: 21))
        keys.append(key)
        nodes.append(node)
        location.setChild(key, to: node)
    }
    let index = AggregateIndex(AggregateIndex.Key(index: .child([ChildKey("score")]), field: [ChildKey("rating")]), node: location)
    let params = QueryParams(
        index: .child([ChildKey("score")]), start: QueryBound(value: .int(250_000), key: .min, inclusive: true),
        end: QueryBound(value: .int(750_000), key: .max, inclusive: true))
    let range = index.track(params, minMax: false, node: location)!
    var plan: [(Int, Node)] = []
    plan.reserveCapacity(updates)
    for _ in 0..<updates { plan.append((rng.next(below: count), child(rng.next(below: 1_000_000), rng.next(below: 21)))) }
    var checksum = 0
    let start = monotonicNanos()
    for (i, node) in plan {
        index.update(key: keys[i], old: nodes[i], new: node)
        nodes[i] = node
        checksum &+= index.summary(of: range).count
    }
    let seconds = secondsSince(start)
    var expected = AggregateSummary()
    for node in nodes {
        guard case .int(let score)? = node.child(ChildKey("score")).leafValue, score >= 250_000 && score <= 750_000 else { continue }
        expected.add(AggregateNumber.of(node, field: [ChildKey("rating")]))
    }
    let got = index.summary(of: range)
    let fromTree = index.summary(params)
    let check =
        got.count == expected.count && got.sum == expected.sum && fromTree.count == expected.count && fromTree.sum == expected.sum
        ? "ok" : "FAIL \(got.count) \(got.sum) tree \(fromTree.count) \(fromTree.sum) expected \(expected.count) \(expected.sum)"
    return BenchResult(
        scenario: name, store: store, n: updates, seconds: seconds,
        extra: [("children", .int(count)), ("checksum", .int(checksum))], check: check)
}
