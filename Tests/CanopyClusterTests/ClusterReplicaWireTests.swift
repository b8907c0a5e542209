import CanopyCluster
import CanopyCore
import CanopyTestSupport
import Foundation
import Testing

/// The SDK protocol checks of `Tests/CanopyServerTests` (`wire_protocol_client.py`, unchanged)
/// played against a follower (`--replicas`): node 1 leads the scenarios' namespaces, every
/// frame goes to node 2.
@Suite(
    ClusterHarness.needed(withPython: true),
    .timeLimit(.minutes(10)))
struct ClusterReplicaWireTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../CanopyServerTests/Interop/wire_protocol_client.py").standardized.path

    /// The scenarios that need no configuration of the server's own (`metrics` first: it counts
    /// from a server no client has used).
    static let scenarios = [
        "metrics", "handshake", "captured_conversation", "default_listen", "large_messages", "transactions", "on_disconnect",
        "reconnect_with_ls", "queries_and_gets", "bad_frames", "random_differential", "vanish_mid_frame", "slow_reader", "many_sockets",
    ]

    @Test func theProtocolChecksPassAgainstAFollower() async throws {
        guard let python = PythonScript.python else {
            Issue.record("CANOPY_REQUIRE_INTEROP=1 but CANOPY_INTEROP_PYTHON is not set")
            return
        }
        try await ClusterHarness.withDatabase { configuration in
            try await ServeProcess.withNodes(2, configuration, extra: ["--replicas"]) { _, port in
                let store = try await ClusterStore.connect(configuration, logger: ClusterHarness.logger)
                for scenario in Self.scenarios {
                    // A namespace of its own, led by node 1 (a write, then its removal: empty as the scenario expects).
                    let namespace = "wire"
                    _ = try NodeHTTP.request("PUT", host: "127.0.0.1", port: port, "/.json?ns=\(namespace)", body: "null")
                    _ = try NodeHTTP.request("PUT", host: "127.0.0.1", port: port, "/lead.json?ns=\(namespace)", body: "1")
                    _ = try NodeHTTP.request("DELETE", host: "127.0.0.1", port: port, "/lead.json?ns=\(namespace)")
                    #expect(try await store.leader(of: namespace)?.advertise == "http://127.0.0.1:\(port)")
                    let (status, output) = try await PythonScript.run(
                        python: python, script: Self.script, ["ws://127.0.0.2:\(port)", scenario], timeout: .seconds(300))
                    #expect(status == 0 && output.contains("wire: \(scenario) ok"), "\(scenario) at a follower:\n\(output)")
                    // The next scenario starts empty.
                    _ = try NodeHTTP.request("PUT", host: "127.0.0.1", port: port, "/.json?ns=\(namespace)", body: "null")
                }
                await store.close()
            }
        }
    }
}
