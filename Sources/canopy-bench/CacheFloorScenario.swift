import Foundation

/// B14.floor: what this machine charges for touching a random child among `children`, with no
/// database at all. The same plan as B14.aggregate (`updates` random children each replaced by a
/// new `{score, rating}`, the count and sum of ratings over the score range kept up to date), on a
/// Swift `Dictionary` of boxed children: one hash probe, the old child read and freed, a new one
/// allocated. The data structure is O(1), so whatever grows from 10k to 1M children is the cost
/// of cache and TLB misses, against which B14's own growth is judged (see *Performance*).
func cacheFloor(_ name: String, children: Int, _ store: Store) throws -> BenchResult {
    final class Child {
        let score: Int
        let rating: Double
        init(score: Int, rating: Double) {
            self.score = score
            self.rating = rating
        }
    }
    let count = Bench.scaled(children)
    let updates = Bench.scaled(2_000_000) * Bench.repeatUpdates
    var rng = BenchRNG(seed: 14)
    var keys: [String] = []
    var scores: [Int] = []
    var quarters: [Int] = []
    var map: [String: Child] = [:]
    map.reserveCapacity(count)
    for i in 0..<count {
        let key = paddedKey(UInt8(ascii: "i"), i, digits: 7)
        keys.append(key)
        scores.append(rng.next(below: 1_000_000))
        quarters.append(rng.next(below: 21))
        map[key] = Child(score: scores[i], rating: Double(quarters[i]) / 4)
    }
    func inRange(_ score: Int) -> Bool { score >= 250_000 && score <= 750_000 }
    var live = (count: 0, sum: 0.0)
    for child in map.values where inRange(child.score) {
        live.count += 1
        live.sum += child.rating
    }
    var plan: [(index: Int, score: Int, quarters: Int)] = []
    plan.reserveCapacity(updates)
    for _ in 0..<updates { plan.append((rng.next(below: count), rng.next(below: 1_000_000), rng.next(below: 21))) }

    let start = monotonicNanos()
    for update in plan {
        let key = keys[update.index]
        let new = Child(score: update.score, rating: Double(update.quarters) / 4)
        if let old = map.updateValue(new, forKey: key), inRange(old.score) {
            live.count -= 1
            live.sum -= old.rating
        }
        if inRange(new.score) {
            live.count += 1
            live.sum += new.rating
        }
    }
    let seconds = secondsSince(start)

    // The brute-force recount (ratings are quarters: every sum is exact).
    for update in plan {
        scores[update.index] = update.score
        quarters[update.index] = update.quarters
    }
    var expected = (count: 0, quarters: 0)
    for i in 0..<count where inRange(scores[i]) {
        expected.count += 1
        expected.quarters += quarters[i]
    }
    let check =
        live.count == expected.count && live.sum == Double(expected.quarters) / 4
        ? "ok" : "FAIL count \(live.count) sum \(live.sum) expected \(expected.count) \(Double(expected.quarters) / 4)"
    return BenchResult(
        scenario: name, store: store, n: updates, seconds: seconds,
        extra: [("children", .int(count)), ("in_range", .int(expected.count))], check: check)
}
