import Canopy
import Foundation

/// B5: `+1` transactions on one counter, from `threads` threads at once, all committed and exact.
func transactions(_ name: String, threads: Int, _ store: Store) throws -> BenchResult {
    let db = try Database.inMemory()
    defer { db.close() }
    let counter = db.reference(withPath: "counter")
    let total = Bench.scaled(100_000)
    let perThread = total / threads
    final class Tally: @unchecked Sendable {  // loop thread only, read after a barrier
        var committed = 0
    }
    let tally = Tally()
    let start = monotonicNanos()
    DispatchQueue.concurrentPerform(iterations: threads) { _ in
        for _ in 0..<perThread {
            counter.runTransactionBlock(
                { data in
                    data.value = (data.value as? Int ?? 0) + 1
                    return .success(withValue: data)
                },
                andCompletionBlock: { _, committed, _ in
                    if committed { tally.committed += 1 }
                })
        }
    }
    let final = try blockingGetData(counter)
    let seconds = secondsSince(start)
    let expected = perThread * threads
    let value = final.value as? Int ?? -1
    let check =
        value == expected && tally.committed == expected
        ? "ok" : "FAIL counter \(value), committed \(tally.committed), expected \(expected)"
    return BenchResult(
        scenario: name, store: store, n: expected, seconds: seconds,
        extra: [("threads", .int(threads)), ("final", .int(value))],
        check: check)
}
