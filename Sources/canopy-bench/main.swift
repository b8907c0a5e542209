// canopy-bench: the benchmark suite of Canopy (see the DocC article Performance), with
// the output schema and driver of the peer benchmark grdb-bench.
//
// Usage:
//   canopy-bench                        run every scenario, each in its own child process
//   canopy-bench list                   print the scenario/store pairs
//   canopy-bench <scenario> [store]     run one scenario in this process (store: memory)
// Options (environment):
//   CANOPY_BENCH_SCALE=0.05             multiply every N (smoke runs)
//
// Output: one JSON object per line on stdout (`scenario, store, n, seconds, ops_per_s,
// peak_rss_mb, …, check`); progress on stderr. `check` is "ok" only when the end state was
// verified; the exit status is non-zero when any check fails.

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

struct Scenario: Sendable {
    var name: String
    var stores: [Store]
    var run: @Sendable (Store) throws -> BenchResult
}

let scenarios: [Scenario] =
    [
        Scenario(name: "B1a.push.each", stores: [.memory, .journal]) {
            try $0 == .journal ? pushEachJournal($0) : pushEach($0, input: .foundation)
        },
        Scenario(name: "B1b.push.batch", stores: [.memory]) { try pushBatch($0, input: .foundation) },
        Scenario(name: "B1a.push.each.json", stores: [.memory]) { try pushEach($0, input: .json) },
        Scenario(name: "B1b.push.batch.json", stores: [.memory]) { try pushBatch($0, input: .json) },
    ] + storageScenarios
    + MemoryShape.allCases.map { shape in
        Scenario(name: shape.scenario, stores: [.memory]) { try memoryPerLeaf(shape, $0) }
    } + [
        Scenario(name: "J1.json.parse", stores: [.memory], run: jsonParse),
        Scenario(name: "J2.json.import", stores: [.memory], run: jsonImport),
        Scenario(name: "B2a.window.random", stores: [.memory]) { try windowScenario("B2a.window.random", WindowConfig(), $0) },
        Scenario(name: "B2a.window.noquery", stores: [.memory]) {
            try windowScenario("B2a.window.noquery", WindowConfig(withQuery: false), $0)
        },
        Scenario(name: "B2a.window.limit10", stores: [.memory]) { try windowScenario("B2a.window.limit10", WindowConfig(window: 10), $0) },
        Scenario(name: "B2a.window.limit1000", stores: [.memory]) {
            try windowScenario("B2a.window.limit1000", WindowConfig(window: 1_000), $0)
        },
        Scenario(name: "B2a.window.n10k", stores: [.memory]) { try windowScenario("B2a.window.n10k", WindowConfig(posts: 10_000), $0) },
        Scenario(name: "B2a.window.n1M", stores: [.memory]) { try windowScenario("B2a.window.n1M", WindowConfig(posts: 1_000_000), $0) },
        Scenario(name: "B2b.window.hot", stores: [.memory]) { try windowScenario("B2b.window.hot", WindowConfig(hot: true), $0) },
        Scenario(name: "B3a.fanout.100", stores: [.memory]) { try rowFanOut("B3a.fanout.100", listeners: 100, $0) },
        Scenario(name: "B3a.fanout.1k", stores: [.memory]) { try rowFanOut("B3a.fanout.1k", listeners: 1_000, $0) },
        Scenario(name: "B3a.fanout.10k", stores: [.memory]) { try rowFanOut("B3a.fanout.10k", listeners: 10_000, $0) },
        Scenario(name: "B3a.fanout.100k", stores: [.memory]) { try rowFanOut("B3a.fanout.100k", listeners: 100_000, $0) },
        Scenario(name: "B3b.broadcast.1k", stores: [.memory]) { try broadcast("B3b.broadcast.1k", listeners: 1_000, $0) },
        Scenario(name: "B3b.broadcast.10k", stores: [.memory]) { try broadcast("B3b.broadcast.10k", listeners: 10_000, $0) },
        Scenario(name: "B5.tx.one", stores: [.memory]) { try transactions("B5.tx.one", threads: 1, $0) },
        Scenario(name: "B5.tx.two", stores: [.memory]) { try transactions("B5.tx.two", threads: 2, $0) },
        Scenario(name: "B7.range.k10", stores: [.memory]) {
            try rangeQueries("B7.range.k10", children: 1_000_000, k: 10, limitOnly: false, $0)
        },
        Scenario(name: "B7.range.k1000", stores: [.memory]) {
            try rangeQueries("B7.range.k1000", children: 1_000_000, k: 1_000, limitOnly: false, $0)
        },
        Scenario(name: "B7.limit.first10", stores: [.memory]) {
            try rangeQueries("B7.limit.first10", children: 1_000_000, k: 10, limitOnly: true, $0)
        },
    ] + serverScenarios + webSocketScenarios + rulesScenarios + ratingAggregateScenarios + aggregateScenarios() + [
        Scenario(name: "B17.browser.page", stores: [.memory]) { try browserPages("B17.browser.page", children: 1_000_000, pages: 200, $0) }
    ] + remoteScenarios + remoteQueryScenarios + largeListenScenarios + clusterLogScenarios + clusterLoadScenarios + clusterWriteScenarios
    + clusterFailoverScenarios + clusterSteadyScenarios + replicaScenarios

/// Runs one scenario here and prints its line; returns whether its check passed.
func runInProcess(_ scenario: Scenario, _ store: Store) -> Bool {
    let result: BenchResult
    do {
        result = try scenario.run(store)
    } catch {
        log("!! \(scenario.name) \(store.rawValue) failed: \(error)")
        result = BenchResult(scenario: scenario.name, store: store, n: 0, seconds: 0, check: "FAIL error: \(error)")
    }
    emit(result.jsonLine)
    return result.passed
}

/// Runs every scenario, each in a fresh child process (so peak RSS is per scenario).
func runAll() throws -> Bool {
    let exe =
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")).map(URL.init(fileURLWithPath:))
        ?? URL(fileURLWithPath: CommandLine.arguments[0])
    log("canopy-bench: scale \(Bench.scale), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(exe.path)")
    var failed: [String] = []
    for scenario in scenarios {
        for store in scenario.stores {
            log("-- \(scenario.name) \(store.rawValue)")
            let child = Process()
            child.executableURL = exe
            child.arguments = [scenario.name, store.rawValue]
            try child.run()
            child.waitUntilExit()
            if child.terminationStatus != 0 || child.terminationReason != .exit {
                log("!! \(scenario.name) \(store.rawValue) exited \(child.terminationStatus)")
                failed.append("\(scenario.name) \(store.rawValue)")
            }
        }
    }
    if !failed.isEmpty { log("failed: \(failed.joined(separator: ", "))") }
    return failed.isEmpty
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments == ["list"] {
    for scenario in scenarios {
        for store in scenario.stores { print(scenario.name, store.rawValue) }
    }
} else if arguments.isEmpty {
    do {
        exit(try runAll() ? 0 : 1)
    } catch {
        log("canopy-bench: could not start a scenario process: \(error)")
        exit(1)
    }
} else if arguments.count <= 2 {
    let matches = scenarios.filter { $0.name == arguments[0] }
    let candidates = matches.isEmpty ? scenarios.filter { $0.name.hasPrefix(arguments[0]) } : matches
    guard candidates.count == 1, let scenario = candidates.first else {
        log("canopy-bench: unknown or ambiguous scenario \(arguments[0]); try `canopy-bench list`")
        exit(2)
    }
    guard let store = arguments.count == 2 ? Store(rawValue: arguments[1]) : .memory, scenario.stores.contains(store) else {
        log(
            "canopy-bench: \(scenario.name) has no store \(arguments.count == 2 ? arguments[1] : ""); stores: \(scenario.stores.map(\.rawValue).joined(separator: ", "))"
        )
        exit(2)
    }
    exit(runInProcess(scenario, store) ? 0 : 1)
} else {
    log("usage: canopy-bench [list | <scenario> [memory]]")
    exit(2)
}
