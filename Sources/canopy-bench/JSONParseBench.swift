import Canopy

// J1: our JSON parser vs Foundation's JSONSerialization on one ~100 MB Firebase-shaped document
// (the scenario itself is `jsonParseComparison(targetBytes:)` in JSONParseScenario.swift).

func jsonParse(_ store: Store) throws -> BenchResult {
    let target = Bench.scaled(100_000_000)
    log("J1: parsing a ~\(target / 1_000_000) MB document (best of 3, ours and Foundation)")
    let result = jsonParseComparison(targetBytes: target)
    let mb = Double(result.bytes) / 1_000_000
    return BenchResult(
        scenario: "J1.json.parse", store: store, n: result.bytes, seconds: result.ours,
        extra: [
            ("mb", .double(mb, 1)),
            ("mb_per_s", .double(mb / result.ours, 1)),
            ("foundation_seconds", .double(result.foundation, 4)),
            ("foundation_mb_per_s", .double(mb / result.foundation, 1)),
            ("speedup_vs_foundation", .double(result.foundation / result.ours, 2)),
        ],
        check: result.check ? "ok" : "FAIL post counts differ")
}

/// J2: importing the same ~100 MB document into a database (`importJSON`: parsed straight into the
/// tree), timed until the data is applied; checks the number of posts read back.
func jsonImport(_ store: Store) throws -> BenchResult {
    let (bytes, posts) = makeFirebaseLikeDocument(targetBytes: Bench.scaled(100_000_000))
    let db = try Database.inMemory()
    defer { db.close() }
    let start = monotonicNanos()
    try db.reference().queueImportJSON(bytes)
    let snapshot = try blockingGetData(db.reference(withPath: "posts"))
    let seconds = secondsSince(start)
    let mb = Double(bytes.count) / 1_000_000
    return BenchResult(
        scenario: "J2.json.import", store: store, n: bytes.count, seconds: seconds,
        extra: [("mb", .double(mb, 1)), ("mb_per_s", .double(mb / seconds, 1)), ("posts", .int(posts))],
        check: Int(snapshot.childrenCount) == posts ? "ok" : "FAIL \(snapshot.childrenCount) posts, expected \(posts)")
}
