import CanopyTestSupport
import Foundation
import NIOCore
import NIOPosix

/// B18.steady: what cluster mode costs a namespace's leader in steady state, for reads and for
/// listens: the same load against `canopy serve --db DIR` (single node, local journal) and
/// `canopy serve --cluster URL` (the namespace's leader, its log in PostgreSQL), both this build's
/// `canopy`, alternating twice in the same minutes. Reports each set-up's best round and the
/// ratios cluster / single of time and of the server's CPU per operation. Listed only when
/// `CANOPY_CLUSTER_URL` is set.
let clusterSteadyScenarios: [Scenario] =
    ProcessInfo.processInfo.environment["CANOPY_CLUSTER_URL"] == nil
    ? []
    : [
        Scenario(name: "B18.steady.reads", stores: [.journal]) { _ in
            try steadyReads("B18.steady.reads", clients: 50, reads: Bench.scaled(200_000))
        },
        Scenario(name: "B18.steady.listens", stores: [.journal]) { _ in
            try steadyListens("B18.steady.listens", clients: 1_000, writesPerSecond: 100)
        },
    ]

/// The two set-ups B18.steady compares.
enum ServeSetUp: CaseIterable {
    case single
    case cluster

    /// Starts `canopy serve` on a free port with this set-up, its data (or log) in `directory`.
    func start(in directory: BenchDirectory, label: String) throws -> ServeProcess {
        let port = try freeLoopbackPort()
        let namespace = "bench-steady-\(UUID().uuidString.prefix(8).lowercased())"
        let arguments: [String]
        switch self {
        case .single:
            arguments = ["--db", directory.path + "/\(label)", "--namespace", namespace]
        case .cluster:
            let url = ProcessInfo.processInfo.environment["CANOPY_CLUSTER_URL"] ?? ""
            arguments = ["--cluster", url, "--advertise", "http://127.0.0.1:\(port)", "--namespace", namespace]
        }
        return try ServeProcess.bench(port: port, arguments: arguments, logPath: directory.path + "/\(label).log")
    }
}

/// Runs `round` twice for each set-up, alternating, each time with a new server and a
/// one-thread event loop group for the clients; their data and logs in a directory `label`.
func alternatingRounds(_ label: String, _ round: (Int, ServeSetUp, ServeProcess, MultiThreadedEventLoopGroup) throws -> Void) throws {
    let directory = try BenchDirectory(label)
    defer { directory.remove() }
    for index in 0..<2 {
        for setUp in ServeSetUp.allCases {
            let server = try setUp.start(in: directory, label: "\(setUp)-\(index)")
            defer { server.stop() }
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            defer { try? group.syncShutdownGracefully() }
            try round(index, setUp, server, group)
        }
    }
}

/// One round's figures: wall time and the server's CPU time for `n` operations.
struct SteadyRound {
    var n: Int
    var seconds: Double
    var cpuSeconds: Double
    var perSecond: Double { Double(self.n) / self.seconds }
    var cpuMicrosPerOperation: Double { self.cpuSeconds / Double(self.n) * 1e6 }
}

/// The rounds of both set-ups as result fields: the best round of each (the most operations per
/// second; its CPU per operation), and the ratios cluster / single.
func steadyFields(_ rounds: [ServeSetUp: [SteadyRound]], unit: String, units: String) -> (fields: [(String, JSONField)], best: SteadyRound)
{
    func best(_ setUp: ServeSetUp) -> SteadyRound { rounds[setUp]!.max { $0.perSecond < $1.perSecond }! }
    let single = best(.single)
    let cluster = best(.cluster)
    return (
        [
            ("single_\(units)_per_s", .int(Int(single.perSecond))), ("cluster_\(units)_per_s", .int(Int(cluster.perSecond))),
            ("time_ratio", .double(single.perSecond / cluster.perSecond, 3)),
            ("single_cpu_us_per_\(unit)", .double(single.cpuMicrosPerOperation, 2)),
            ("cluster_cpu_us_per_\(unit)", .double(cluster.cpuMicrosPerOperation, 2)),
            ("cpu_ratio", .double(cluster.cpuMicrosPerOperation / single.cpuMicrosPerOperation, 3)),
        ], cluster
    )
}

/// B18.steady.reads: `clients` keep-alive connections share `reads` REST reads of single
/// children of a location of 10,000.
func steadyReads(_ name: String, clients: Int, reads: Int) throws -> BenchResult {
    let children = 10_000
    let body = "{" + (0..<children).map { "\"k\($0)\":{\"n\":\($0),\"name\":\"item \($0)\"}" }.joined(separator: ",") + "}"
    var rounds: [ServeSetUp: [SteadyRound]] = [:]
    var check = "ok"
    try alternatingRounds("b18-steady-reads") { round, setUp, server, group in
        let port = server.port
        _ = try blocking { try await fetch(port: port, "/items.json?print=silent", method: "PUT", body: body) }
        let perClient = reads / clients
        let cpu = server.cpuSeconds
        let start = monotonicNanos()
        let outcomes = try httpLoads(clients: clients, port: port, group: group) { client, i in
            guard i < perClient else { return nil }
            return httpRequest("GET", "/items/k\((client * 7_919 + i * 31) % children).json", body: "")
        }
        let seconds = secondsSince(start)
        let cpuSeconds = server.cpuSeconds - cpu
        let answered = outcomes.reduce(0) { $0 + ((try? $1.get()) ?? 0) }
        let probe = try blocking { try await fetch(port: port, "/items/k4242.json") }
        if answered != perClient * clients {
            check = "FAIL \(setUp): \(answered) of \(perClient * clients) reads answered"
        } else if probe != #"{"n":4242,"name":"item 4242"}"# {
            check = "FAIL \(setUp): items/k4242 read \(probe)"
        }
        rounds[setUp, default: []].append(SteadyRound(n: answered, seconds: seconds, cpuSeconds: cpuSeconds))
        log("\(name) \(setUp) round \(round + 1): \(Int(Double(answered) / seconds)) reads/s")
    }
    let (fields, best) = steadyFields(rounds, unit: "read", units: "reads")
    return BenchResult(
        scenario: name, store: .journal, n: best.n, seconds: best.seconds, extra: [("clients", .int(clients))] + fields, check: check)
}

/// B18.steady.listens: B9's fan-out (`clients` event streams on one location, a writer paced to
/// `writesPerSecond`) against each set-up; compares the events delivered per second and the
/// server's CPU per delivered event. With many streams per write, the figure is the listens'
/// cost; what cluster mode adds to each write is B18.write's.
func steadyListens(_ name: String, clients: Int, writesPerSecond: Int) throws -> BenchResult {
    var rounds: [ServeSetUp: [SteadyRound]] = [:]
    var latencies: [ServeSetUp: [(String, JSONField)]] = [:]
    var check = "ok"
    try alternatingRounds("b18-steady-listens") { round, setUp, server, group in
        let cpu = server.cpuSeconds
        let result: BenchResult
        do {
            result = try sseFanOut(name, clients: clients, writesPerSecond: writesPerSecond, .journal, server: server, group: group)
        } catch {
            throw BenchError("\(error) (\(setUp), the server's log ends: \(server.logTail))")
        }
        if !result.passed { check = "\(result.check) (\(setUp), the server's log ends: \(server.logTail))" }
        // The whole round's server CPU (connecting the streams included) per delivered event.
        rounds[setUp, default: []].append(SteadyRound(n: result.n, seconds: result.seconds, cpuSeconds: server.cpuSeconds - cpu))
        latencies[setUp] = result.extra.filter { $0.0.hasSuffix("_write_to_receive_us") }.map { ("\(setUp)_" + $0.0, $0.1) }
        log("\(name) \(setUp) round \(round + 1): \(result.n) events in \(String(format: "%.2f", result.seconds)) s")
    }
    let (fields, best) = steadyFields(rounds, unit: "event", units: "events")
    return BenchResult(
        scenario: name, store: .journal, n: best.n, seconds: best.seconds,
        extra: [("clients", .int(clients)), ("writes_per_s", .int(writesPerSecond))] + fields + latencies[.single, default: []]
            + latencies[.cluster, default: []],
        check: check)
}
