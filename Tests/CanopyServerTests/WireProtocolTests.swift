import CanopyServer
import Foundation
import Testing

/// The SDKs' WebSocket protocol, driven frame by frame by a client of our own written from the
/// protocol notes and the JS SDK's captured conversation (`Interop/wire_protocol_client.py`, on
/// Python's `websockets` from PyPI), against a live server on loopback.
///
/// Runs with the interop interpreter (`CANOPY_INTEROP_PYTHON`, which `.ci/run` provides with
/// `websockets` installed); with `CANOPY_REQUIRE_INTEROP=1` a missing interpreter fails the test.
@Suite("WebSocket protocol")
struct WireProtocolTests {
    static let scenarios = [
        "handshake", "captured_conversation", "default_listen", "large_messages", "transactions",
        "on_disconnect", "reconnect_with_ls", "queries_and_gets", "bad_frames",
        "random_differential", "vanish_mid_frame", "slow_reader", "many_sockets", "metrics",
    ]

    @Test("scenario", .enabled(if: PythonClient.runnable, PythonClient.skipReason), arguments: scenarios)
    func scenario(_ name: String) async throws {
        try await Self.play(name, on: makeServer())
    }

    /// Runs the client's scenario `name` against `server`, live on loopback.
    static func play(_ name: String, on server: CanopyServer) async throws {
        try await withLiveServer(server) { port in
            try await PythonClient.run("wire_protocol_client", ["ws://127.0.0.1:\(port)", name], expecting: "wire: \(name) ok")
        }
    }

    @Test(
        "pings: a silent client that answers none is closed and its onDisconnect runs; one that answers stays",
        .enabled(if: PythonClient.runnable, PythonClient.skipReason))
    func liveness() async throws {
        try await Self.play("liveness", on: makeServer { $0.webSocketPingInterval = .seconds(1) })
    }

    @Test("with --auth-token: only the admin token opens the data", .enabled(if: PythonClient.runnable, PythonClient.skipReason))
    func adminToken() async throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.authToken = "s3cret"
        // Two namespaces at most: connections without the token must not have opened any.
        try await Self.play(
            "admin_token", on: CanopyServer(configuration: configuration, store: NamespaceStore(directory: nil, maxNamespaces: 2)))
    }

    @Test(
        "with rules and user tokens: per-user access, validation, query rules, revocation",
        .enabled(if: PythonClient.runnable, PythonClient.skipReason))
    func securityRules() async throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.authToken = "s3cret"
        configuration.jwtSecret = Array("canopy-test-secret-of-at-least-32-bytes".utf8)
        configuration.rules = """
            {
              "rules": {
                "users": {
                  "$uid": {
                    ".read": "auth != null && auth.uid === $uid",
                    ".write": "auth != null && auth.uid === $uid",
                    "name": {".validate": "newData.isString()"}
                  }
                },
                "public": {".read": true},
                "posts": {".read": "auth != null && query.orderByChild === 'author' && query.equalTo === auth.uid"}
              }
            }
            """
        try await Self.play("security_rules", on: CanopyServer(configuration: configuration, store: NamespaceStore(directory: nil)))
    }
}
