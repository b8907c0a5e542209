import Canopy
import Dispatch
import Foundation

/// B14: a live `orderByChild("score").queryStarting(atValue: 250_000).queryEnding(atValue: 750_000)`
/// `.aggregate(.count, .sum("rating"), .average("rating"))` over `children` children while random
/// updates replace whole children (a new score, so children move in and out of the range, and a
/// new rating). The aggregate must equal a brute-force recount at the end, both as observed and
/// as read; per-update cost must not grow with the number of children (O(log *n*)).
struct AggregateConfig {
    var children = 100_000
    var updates = 200_000
    /// Children written per call: 1 is one `setValue` per update; more is one
    /// `updateChildValues` of that many children (50: below the engine's bulk-merge threshold of
    /// 64 entries, whose merge is O(*n*) per call whatever is observed).
    var batch = 1
    /// Run the same updates with no aggregate attached (the cost baseline).
    var withAggregate = true
}

func aggregateScenarios() -> [Scenario] {
    var result: [Scenario] = []
    for (suffix, n) in [("n10k", 10_000), ("n100k", 100_000), ("n1M", 1_000_000)] {
        result.append(
            Scenario(name: "B14.index.\(suffix)", stores: [.memory]) { try aggregateIndexAlone("B14.index.\(suffix)", children: n, $0) })
        result.append(Scenario(name: "B14.floor.\(suffix)", stores: [.memory]) { try cacheFloor("B14.floor.\(suffix)", children: n, $0) })
        result.append(
            Scenario(name: "B14.aggregate.\(suffix)", stores: [.memory]) {
                try liveAggregate("B14.aggregate.\(suffix)", AggregateConfig(children: n), $0)
            })
        result.append(
            Scenario(name: "B14.aggregate.batch50.\(suffix)", stores: [.memory]) {
                try liveAggregate("B14.aggregate.batch50.\(suffix)", AggregateConfig(children: n, batch: 50), $0)
            })
    }
    // The same writes with no aggregate at 10k too: how much of the 10k → 1M slowdown is the
    // plain write's own (a larger tree, more cache misses).
    result.append(
        Scenario(name: "B14.aggregate.none.n10k", stores: [.memory]) {
            try liveAggregate("B14.aggregate.none.n10k", AggregateConfig(children: 10_000, withAggregate: false), $0)
        })
    result.append(
        Scenario(name: "B14.aggregate.none.n1M", stores: [.memory]) {
            try liveAggregate("B14.aggregate.none.n1M", AggregateConfig(children: 1_000_000, withAggregate: false), $0)
        })
    result.append(
        Scenario(name: "B14.aggregate.none.batch50.n1M", stores: [.memory]) {
            try liveAggregate("B14.aggregate.none.batch50.n1M", AggregateConfig(children: 1_000_000, batch: 50, withAggregate: false), $0)
        })
    return result
}

/// The last value an observer saw, and how many it saw (loop thread; read after a barrier).
final class AggregateSeen: @unchecked Sendable {  // mutated only on the loop thread, read after a blocking read
    var last: AggregateSnapshot?
    var calls = 0
}

func liveAggregate(_ name: String, _ config: AggregateConfig, _ store: Store) throws -> BenchResult {
    let db = try Database.inMemory()
    defer { db.close() }
    let items = db.reference(withPath: "items")
    let count = Bench.scaled(config.children)
    let updates = Bench.scaled(config.updates) * Bench.repeatUpdates
    let plan = AggregatePlan(children: count, updates: updates)
    var initial: [String: JSONValue] = [:]
    initial.reserveCapacity(count)
    for i in 0..<count {
        initial[plan.keys[i]] = ["score": .int(Int64(plan.scores[i])), "rating": .double(Double(plan.quarters[i]) / 4)]
    }
    try items.queueSetValue(JSONValue.object(initial))
    initial = [:]
    let query = items.queryOrdered(byChild: "score").queryStarting(atValue: AggregatePlan.range.lowerBound)
        .queryEnding(atValue: AggregatePlan.range.upperBound)
    let aggregate = query.aggregate(.count, .sum("rating"), .average("rating"))
    let seen = AggregateSeen()
    if config.withAggregate {
        aggregate.observe { snapshot in
            seen.last = snapshot
            seen.calls += 1
        }
    }
    _ = try blockingGetData(items.child("i0000000"))
    let setupCalls = seen.calls

    let values: [Any] = plan.updates.map { ["score": $0.score, "rating": Double($0.quarters) / 4] as [String: Any] }
    let keys = plan.keys

    let loopCPUBefore = threadCPUSeconds(named: "canopy-loop")
    let start = monotonicNanos()
    if config.batch <= 1 {
        for (i, update) in plan.updates.enumerated() { try items.child(keys[update.index]).queueSetValue(values[i]) }
    } else {
        var i = 0
        while i < updates {
            var entries: [String: Any] = [:]
            let end = min(updates, i + config.batch)
            for j in i..<end { entries[keys[plan.updates[j].index]] = values[j] }
            try items.queueUpdateChildValues(entries)
            i = end
        }
    }
    let issued = secondsSince(start)
    // A read queued behind every write: when it returns, all are applied and observed.
    _ = try blockingGetData(items.child("i0000000"))
    let seconds = secondsSince(start)
    // The loop thread's CPU time for the writes: steadier than the wall clock on a shared machine.
    let loopCPU = threadCPUSeconds(named: "canopy-loop").flatMap { after in loopCPUBefore.map { after - $0 } }

    // The brute-force recount.
    let (inRange, quarters) = plan.recount()
    let sum = Double(quarters) / 4
    let average = inRange == 0 ? nil : sum / Double(inRange)
    var check = "ok"
    let read = try blockingAggregate(aggregate)
    if read.count != inRange || read.sum("rating") != sum || read.average("rating") != average {
        check = "FAIL read \(read) expected count \(inRange) sum \(sum)"
    }
    if config.withAggregate {
        if let last = seen.last, last != read {
            check = "FAIL observed \(last) read \(read)"
        } else if seen.calls - setupCalls > updates {
            check = "FAIL \(seen.calls - setupCalls) calls for \(updates) updates"
        }
    }
    return BenchResult(
        scenario: name, store: store, n: updates, seconds: seconds,
        extra: [
            ("children", .int(count)), ("batch", .int(config.batch)), ("aggregate", .bool(config.withAggregate)),
            ("issue_seconds", .double(issued, 4)), ("loop_cpu_seconds", loopCPU.map { .double($0, 2) } ?? .double(.nan, 0)),
            ("loop_cpu_ops_per_s", loopCPU.map { $0 > 0 ? .int(Int(Double(updates) / $0)) : .double(.nan, 0) } ?? .double(.nan, 0)),
            ("observer_calls", .int(seen.calls - setupCalls)), ("in_range", .int(inRange)),
        ],
        check: check)
}

/// Reads an aggregate once and waits for it.
func blockingAggregate(_ aggregate: AggregateQuery) throws -> AggregateSnapshot {
    try blockingRead("aggregate", aggregate.getData(completion:))
}
