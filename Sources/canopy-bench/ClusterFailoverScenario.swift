import CanopyTestSupport
import Foundation
import NIOCore
import Synchronization

/// B18.failover: three `canopy serve --cluster` nodes of this build on 127.0.0.1–3 (one port) and
/// eight REST writers, each putting distinct keys in turn to whichever node it last reached (a
/// redirect names the leader; a refused connection or a `503` moves it to the next node). The
/// namespace's leader is SIGKILLed 20 times, and restarted once its successor acknowledged a
/// write. Measures, for each kill, the time from the kill to the first write acknowledged by
/// another node; checks that every acknowledged write is stored. Listed only when
/// `CANOPY_CLUSTER_URL` is set.
let clusterFailoverScenarios: [Scenario] =
    ProcessInfo.processInfo.environment["CANOPY_CLUSTER_URL"] == nil
    ? []
    : [
        Scenario(name: "B18.failover", stores: [.memory]) { _ in
            try blockingAwait { try await clusterFailover("B18.failover", kills: max(3, Int((20 * Bench.scale).rounded())), writers: 8) }
        }
    ]

/// The writers' shared record: every acknowledged key, and when and by which node each write was
/// acknowledged.
final class FailoverLedger: Sendable {
    private struct State {
        var keys: [String] = []
        var acknowledgements: [(at: UInt64, host: String)] = []
        var stopped = false
    }
    private let state = Mutex(State())

    func acknowledged(_ key: String, by host: String) {
        let now = monotonicNanos()
        self.state.withLock {
            $0.keys.append(key)
            $0.acknowledgements.append((now, host))
        }
    }

    /// The node that acknowledged the newest write.
    var lastHost: String? { self.state.withLock { $0.acknowledgements.last?.host } }
    var count: Int { self.state.withLock { $0.keys.count } }
    var keys: [String] { self.state.withLock { $0.keys } }
    var stopped: Bool { self.state.withLock { $0.stopped } }
    func stop() { self.state.withLock { $0.stopped = true } }

    /// The time of the first write acknowledged after `instant` by a node other than `host`.
    func firstAcknowledgement(after instant: UInt64, notBy host: String) -> UInt64? {
        self.state.withLock { state in
            var first: UInt64?
            for acknowledgement in state.acknowledgements.reversed() {
                guard acknowledgement.at > instant else { break }
                if acknowledgement.host != host { first = acknowledgement.at }
            }
            return first
        }
    }
}

/// An HTTP response's status and `Location`.
struct BenchHTTPResponse {
    var status: Int
    var location: String?
    var body: String
}

/// One request on a new connection to `host:port`; `nil` when the connection fails or no
/// complete response arrives within 10 s.
func benchRequest(host: String, port: Int, _ method: String, _ target: String, body: String = "") async -> BenchHTTPResponse? {
    let request =
        "\(method) \(target) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\nContent-Type: application/json\r\n"
        + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    guard let bytes = try? await exchange(host: host, port: port, request, timeout: .seconds(10)) else { return nil }
    let text = String(decoding: bytes, as: UTF8.self)
    guard let split = text.range(of: "\r\n\r\n"), text.hasPrefix("HTTP/1.1 "), let status = Int(text.dropFirst(9).prefix(3)) else {
        return nil
    }
    let headers = text[..<split.lowerBound].split(separator: "\r\n")
    let location = headers.first { $0.lowercased().hasPrefix("location:") }.map {
        String($0.dropFirst(9)).trimmingCharacters(in: .whitespaces)
    }
    return BenchHTTPResponse(status: status, location: location, body: String(text[split.upperBound...]))
}

func clusterFailover(_ name: String, kills: Int, writers: Int) async throws -> BenchResult {
    guard let url = ProcessInfo.processInfo.environment["CANOPY_CLUSTER_URL"] else { throw BenchError("CANOPY_CLUSTER_URL is not set") }
    let directory = try BenchDirectory("b18-failover")
    defer { directory.remove() }
    let port = try freeLoopbackPort()
    let namespace = "bench-failover-\(UUID().uuidString.prefix(8).lowercased())"
    let hosts = (1...3).map { "127.0.0.\($0)" }
    let nodes = try hosts.map { host in
        try ServeProcess.bench(
            host: host, port: port, arguments: ["--cluster", url, "--advertise", "http://\(host):\(port)"],
            logPath: directory.path + "/\(host).log")
    }
    defer { for node in nodes { node.stop() } }
    let ledger = FailoverLedger()

    let writerTasks = (0..<writers).map { writer in
        Task {
            var host = hosts[writer % hosts.count]
            var i = 0
            while !ledger.stopped {
                let key = "w\(writer)-\(i)"
                let response = await benchRequest(
                    host: host, port: port, "PUT", "/failover/\(key).json?ns=\(namespace)&print=silent",
                    body: "{\"w\":\(writer),\"i\":\(i)}")
                switch response?.status {
                case .some(let status) where status / 100 == 2:
                    ledger.acknowledged(key, by: host)
                    i += 1
                case .some(307), .some(308):
                    // Location: http://HOST:PORT/…
                    if let location = response?.location, let named = URL(string: location)?.host, hosts.contains(named) {
                        host = named
                    } else {
                        host = hosts[(hosts.firstIndex(of: host)! + 1) % hosts.count]
                    }
                default:
                    host = hosts[(hosts.firstIndex(of: host)! + 1) % hosts.count]
                    try? await Task.sleep(for: .milliseconds(10))
                }
            }
        }
    }

    func waitFor(_ what: String, _ condition: () -> Bool) async throws {
        let deadline = monotonicNanos() + 60_000_000_000
        while !condition() {
            guard monotonicNanos() < deadline else { throw BenchError("\(what) within 60 s") }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    var gaps: [UInt64] = []
    var failure: (any Error)?
    let began = monotonicNanos()
    do {
        try await waitFor("no write was acknowledged") { ledger.count > 0 }
        for _ in 0..<kills {
            // Let writes flow on the current leader before killing it.
            let before = ledger.count
            try await waitFor("writes stopped") { ledger.count >= before + 50 }
            guard let leaderHost = ledger.lastHost, let victim = nodes.first(where: { $0.host == leaderHost }) else { break }
            let killedAt = monotonicNanos()
            victim.kill9()
            var successor: UInt64?
            try await waitFor("no node took over after the kill of \(leaderHost)") {
                successor = ledger.firstAcknowledgement(after: killedAt, notBy: leaderHost)
                return successor != nil
            }
            gaps.append(successor! - killedAt)
            try victim.start()
        }
    } catch {
        failure = error
    }
    let seconds = secondsSince(began)
    ledger.stop()
    for task in writerTasks { await task.value }

    // The end state: every acknowledged key is stored (read through any live node, following a redirect).
    var check = failure.map { "FAIL \($0)" } ?? "ok"
    if check == "ok" {
        var host = hosts[0]
        var stored: Set<String>?
        for _ in 0..<10 {
            guard let response = await benchRequest(host: host, port: port, "GET", "/failover.json?ns=\(namespace)&shallow=true") else {
                host = hosts[(hosts.firstIndex(of: host)! + 1) % hosts.count]
                continue
            }
            if response.status == 307, let named = response.location.flatMap({ URL(string: $0)?.host }) {
                host = named
                continue
            }
            if response.status == 200, let object = try? JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any] {
                stored = Set(object.keys)
            }
            break
        }
        if let stored {
            let missing = ledger.keys.filter { !stored.contains($0) }
            if !missing.isEmpty { check = "FAIL \(missing.count) acknowledged writes missing, first \(missing[0])" }
        } else {
            check = "FAIL the namespace could not be read back"
        }
    }
    var sorted = gaps
    let summary = LatencySummary(sortingNanos: &sorted)
    return BenchResult(
        scenario: name, store: .memory, n: gaps.count, seconds: seconds,
        extra: [
            ("nodes", .int(nodes.count)), ("writers", .int(writers)), ("acknowledged_writes", .int(ledger.count)),
            ("failover_p50_ms", .double(summary.p50 / 1000, 1)), ("failover_p99_ms", .double(summary.p99 / 1000, 1)),
            ("failover_max_ms", .double(summary.max / 1000, 1)),
        ], check: check)
}
