import Canopy
import CanopyCluster
import CanopyCore
import CanopyRemote
import CanopyStorage
import CanopyTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `canopy serve --cluster` processes on `127.0.0.N`.
extension ServeProcess {
    /// A node of the cluster `cluster` (its `--cluster` options) on `host:port`, advertising that.
    static func clusterNode(host: String, port: Int, cluster: [String], extra: [String] = []) throws -> ServeProcess {
        try ServeProcess(
            executable: builtExecutable("canopy"), host: host, port: port,
            arguments: ["--advertise", "http://\(host):\(port)"] + cluster + extra)
    }

    /// Runs `body` with `count` nodes on 127.0.0.1…`count`, one port, on `configuration`'s
    /// database (the password in a file), each also given `extra`; stops them afterwards.
    static func withNodes<T>(
        _ count: Int, _ configuration: ClusterConfiguration, extra: [String] = [], _ body: ([ServeProcess], Int) async throws -> T
    ) async throws -> T {
        let directory = TemporaryDirectory()
        let cluster = try ClusterCommandTests.arguments(configuration, passwordFile: directory.path + "/password")
        let port = try freeLoopbackPort()
        let nodes = try (1...count).map { try Self.clusterNode(host: "127.0.0.\($0)", port: port, cluster: cluster, extra: extra) }
        defer { for node in nodes { node.stop() } }
        return try await body(nodes, port)
    }
}

/// `Database(url:)` against three `canopy serve --cluster` nodes whose leader is SIGKILLed: it
/// follows the redirects to the leader, its awaited writes and transactions all land once, and a
/// listener on another `Database(url:)` ends with exactly the data.
@Suite(ClusterHarness.needed(), .timeLimit(.minutes(5)))
struct ClusterRemoteClientTests {
    static func remote(_ url: String) throws -> Database {
        var configuration = Database.Configuration()
        configuration.minimumRetryDelay = .milliseconds(100)
        configuration.maximumRetryDelay = .milliseconds(500)
        // A one-shot read waits for the server as long as a hang guard allows: on a busy
        // machine, with a dozen nodes of other suites, an answer can take longer than the
        // default 10 s, and how long is the benchmarks' business.
        configuration.requestTimeout = .seconds(60)
        return try Database(url: url, configuration: configuration)
    }

    @Test func databaseURLFollowsTheLeaderThroughKillsAndLosesNothing() async throws {
        try await ClusterHarness.withDatabase { configuration in
            try await ServeProcess.withNodes(3, configuration) { nodes, port in
                let store = try await ClusterStore.connect(configuration, logger: ClusterHarness.logger)

                let writer = try Self.remote("http://127.0.0.1:\(port)?ns=swift")
                let reader = try Self.remote("http://127.0.0.3:\(port)?ns=swift")
                defer {
                    writer.close()
                    reader.close()
                }
                let seen = Mutex<JSONValue?>(nil)
                let handle = reader.reference(withPath: "items").observe(.value) { snapshot in
                    let json = snapshot.exportJSON
                    seen.withLock { $0 = json }
                }
                defer { reader.reference(withPath: "items").removeObserver(withHandle: handle) }
                // Node 3 takes the namespace (the reader's first request): the writer, given node 1,
                // is redirected there.
                _ = try await reader.reference(withPath: "items").getData()
                #expect(try await store.leader(of: "swift")?.advertise == "http://127.0.0.3:\(port)")

                var written = 0
                for round in 0..<4 {
                    for _ in 0..<25 {
                        written += 1
                        _ = try await writer.reference(withPath: "items/k\(written)").setValue(written)
                    }
                    for _ in 0..<3 {
                        _ = try await writer.reference(withPath: "counter").runTransactionBlock { data in
                            data.value = ((data.value as? Int) ?? 0) + 1
                            return .success(withValue: data)
                        }
                    }
                    guard round < 3 else { break }
                    // The leader dies; the client is left on a dead host until it reconnects.
                    let leader = try #require(try await store.leader(of: "swift"))
                    let victim = try #require(nodes.first { leader.advertise == "http://\($0.host):\(port)" })
                    victim.kill9()
                    try victim.start()
                }
                // Every awaited write and transaction is in the log, once.
                let start = try await store.load("swift")
                let items = start.root.child(ChildKey("items"))
                #expect(items.childCount == written)
                #expect(start.root.child(ChildKey("counter")) == .leaf(.int(12)))
                // Three takeovers after the first lead.
                #expect(try await store.leader(of: "swift").map(\.epoch) ?? 0 >= 4)
                // The listener, redirected and reconnected like the writer, ends with exactly the data.
                var expected: [String: JSONValue] = [:]
                for i in 1...written { expected["k\(i)"] = .int(Int64(i)) }
                let deadline = ContinuousClock.now + .seconds(120)
                while seen.withLock({ $0 }) != .object(expected) && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(seen.withLock { $0 } == .object(expected))
                await store.close()
            }
        }
    }
}
