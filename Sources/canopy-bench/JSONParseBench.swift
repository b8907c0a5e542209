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
