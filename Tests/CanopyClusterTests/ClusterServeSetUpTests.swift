import CanopyCluster
import CanopyCore
import CanopyTestSupport
import Foundation
import Testing

/// `canopy serve --cluster` set up wrongly: a one-line error and a non-zero exit, never a crash.
@Suite(ClusterHarness.needed(), .timeLimit(.minutes(2)))
struct ClusterServeSetUpTests {
    static func serve(_ arguments: [String]) throws -> ClusterCommandTests.Run {
        try ClusterCommandTests.canopy(["serve", "--port", "0"] + arguments)
    }

    static func expectOneLine(
        _ run: ClusterCommandTests.Run, exit: Int32, containing text: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(run.status == exit, "\(run.stderr)", sourceLocation: sourceLocation)
        #expect(run.stderr.contains(text), "\(run.stderr)", sourceLocation: sourceLocation)
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)", sourceLocation: sourceLocation)
    }

    @Test func badURLsOptionsPasswordsAndServersAreOneLineErrors() async throws {
        let configuration = try ClusterHarness.configuration()
        let directory = TemporaryDirectory()
        let advertise = ["--advertise", "http://127.0.0.1:9501"]
        Self.expectOneLine(try Self.serve(["--cluster", "mysql://nobody@somewhere/db"] + advertise), exit: 64, containing: "postgres://")
        // TLS is not silently dropped: a URL that asks for it is refused before anything connects.
        Self.expectOneLine(
            try Self.serve(["--cluster", "postgres://nobody@somewhere/db?sslmode=require"] + advertise), exit: 64,
            containing: "without TLS")
        Self.expectOneLine(try Self.serve(["--cluster", configuration.description]), exit: 64, containing: "--advertise")
        Self.expectOneLine(
            try Self.serve(["--cluster", configuration.description, "--advertise", "127.0.0.1:9501"]), exit: 64,
            containing: "http://HOST:PORT")
        Self.expectOneLine(try Self.serve(["--advertise", "http://127.0.0.1:9501"]), exit: 64, containing: "--cluster")
        for lease in ["0", "61", "nan"] {
            Self.expectOneLine(
                try Self.serve(["--cluster", configuration.description, "--cluster-lease", lease] + advertise), exit: 64,
                containing: "--cluster-lease")
        }
        Self.expectOneLine(try Self.serve(["--cluster-lease", "10"]), exit: 64, containing: "go with --cluster")
        var wrong = configuration
        wrong.password = "wrong-password-78"
        let denied = try Self.serve(try ClusterCommandTests.arguments(wrong, passwordFile: directory.path + "/wrong") + advertise)
        Self.expectOneLine(denied, exit: 69, containing: "password authentication failed")
        #expect(!denied.stderr.contains("wrong-password-78"))
        let down = try Self.serve(["--cluster", "postgres://postgres@127.0.0.1:1/postgres"] + advertise)
        Self.expectOneLine(down, exit: 69, containing: "127.0.0.1:1")
    }

    /// Runs `body` with a new cluster database and the `--cluster` options that name it.
    static func withClusterOptions(_ body: (ClusterConfiguration, [String]) async throws -> Void) async throws {
        try await ClusterHarness.withDatabase { configuration in
            let directory = TemporaryDirectory()
            try await body(configuration, try ClusterCommandTests.arguments(configuration, passwordFile: directory.path + "/password"))
        }
    }

    @Test func twoNodesCannotAdvertiseTheSameAddress() async throws {
        try await Self.withClusterOptions { _, cluster in
            // The first node registered and serves (it listens once registered).
            let first = try ServeProcess.clusterNode(host: "127.0.0.1", port: try freeLoopbackPort(), cluster: cluster)
            defer { first.stop() }
            let taken = "http://127.0.0.1:\(first.port)"
            let second = try Self.serve(["--advertise", taken] + cluster)
            Self.expectOneLine(second, exit: 1, containing: "Another live node of the cluster advertises \(taken)")
        }
    }

    @Test func aNodesLeaseLastsWhatItsFlagSays() async throws {
        try await Self.withClusterOptions { configuration, cluster in
            let short = try ServeProcess.clusterNode(host: "127.0.0.1", port: try freeLoopbackPort(), cluster: cluster)
            defer { short.stop() }
            let long = try ServeProcess.clusterNode(
                host: "127.0.0.2", port: try freeLoopbackPort(), cluster: cluster + ["--cluster-lease", "30"])
            defer { long.stop() }
            let store = try await ClusterStore.connect(configuration, logger: ClusterHarness.logger)
            let nodes = try await store.status().nodes
            await store.close()
            let shortLease = try #require(nodes.first { $0.advertise == "http://127.0.0.1:\(short.port)" }).leaseSeconds
            let longLease = try #require(nodes.first { $0.advertise == "http://127.0.0.2:\(long.port)" }).leaseSeconds
            #expect(shortLease <= 3, "the default lease is 3 s; \(shortLease) s left")
            #expect(longLease > 20 && longLease <= 30, "--cluster-lease 30: \(longLease) s left")
        }
    }
}
