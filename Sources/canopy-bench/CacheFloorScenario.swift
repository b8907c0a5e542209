/// B14.floor: what this machine charges for reaching and replacing a random child among
/// `children`, with no database at all. B14's plan (``AggregatePlan``: the same children, and
/// the same updates continued to 2M, as this runs faster; the count and sum of ratings over the
/// score range kept per update) on a Swift
/// `Dictionary` of boxed children: one hash probe, the old child read and freed, a new one
/// allocated. The structure is O(1), so whatever grows from 10k to 1M children is the cost of
/// cache and TLB misses, against which B14's own growth is judged (see *Performance*).
func cacheFloor(_ name: String, children: Int, _ store: Store) throws -> BenchResult {
    final class Child {
        let score: Int
        let rating: Double
        init(score: Int, quarters: Int) {
            self.score = score
            self.rating = Double(quarters) / 4
        }
    }
    let count = Bench.scaled(children)
    let plan = AggregatePlan(children: count, updates: Bench.scaled(2_000_000) * Bench.repeatUpdates)
    var map: [String: Child] = [:]
    map.reserveCapacity(count)
    var live = (count: 0, sum: 0.0)
    for i in 0..<count {
        let child = Child(score: plan.scores[i], quarters: plan.quarters[i])
        map[plan.keys[i]] = child
        if AggregatePlan.range.contains(child.score) {
            live.count += 1
            live.sum += child.rating
        }
    }

    let start = monotonicNanos()
    for update in plan.updates {
        let new = Child(score: update.score, quarters: update.quarters)
        if let old = map.updateValue(new, forKey: plan.keys[update.index]), AggregatePlan.range.contains(old.score) {
            live.count -= 1
            live.sum -= old.rating
        }
        if AggregatePlan.range.contains(new.score) {
            live.count += 1
            live.sum += new.rating
        }
    }
    let seconds = secondsSince(start)

    let expected = plan.recount()
    let check =
        live.count == expected.count && live.sum == Double(expected.quarters) / 4
        ? "ok" : "FAIL count \(live.count) sum \(live.sum) expected \(expected.count) \(Double(expected.quarters) / 4)"
    return BenchResult(
        scenario: name, store: store, n: plan.updates.count, seconds: seconds,
        extra: [("children", .int(count)), ("in_range", .int(expected.count))], check: check)
}
