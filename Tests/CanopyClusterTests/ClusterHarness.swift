import CanopyCluster
import CanopyCore
import CanopyTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing

/// The PostgreSQL the cluster tests run against: `.ci/postgres start` creates a throwaway one and
/// exports its URL as `CANOPY_CLUSTER_URL`. Each test gets a database of its own, created here and
/// dropped when it ends. Without the URL the tests are skipped, unless `CANOPY_REQUIRE_CLUSTER=1`
/// (CI), which makes its absence a failure.
enum ClusterHarness {
    static var url: String? { ProcessInfo.processInfo.environment["CANOPY_CLUSTER_URL"].flatMap { $0.isEmpty ? nil : $0 } }
    static var required: Bool { ProcessInfo.processInfo.environment["CANOPY_REQUIRE_CLUSTER"] == "1" }
    static var runnable: Bool { Self.url != nil || Self.required }
    static let skipReason: Comment =
        "needs a PostgreSQL: eval \"$(.ci/postgres start)\" sets CANOPY_CLUSTER_URL (CANOPY_REQUIRE_CLUSTER=1 makes its absence a failure)"

    static let logger = Logger(label: "canopy.cluster.tests")

    /// The trait of a suite that needs the PostgreSQL (and, `withPython`, the Python clients too).
    static func needed(withPython: Bool = false) -> ConditionTrait {
        .enabled(if: Self.runnable && (!withPython || PythonScript.python != nil || PythonScript.required), Self.skipReason)
    }

    /// The server's configuration, on database `database`.
    static func configuration(database: String = "postgres", lease: Duration = .seconds(3)) throws -> ClusterConfiguration {
        guard let url = Self.url else {
            Issue.record("CANOPY_REQUIRE_CLUSTER=1 but CANOPY_CLUSTER_URL is not set")
            throw DatabaseError(.invalidValue, "no CANOPY_CLUSTER_URL")
        }
        var configuration = try ClusterConfiguration(url: url, environment: [:])
        configuration.database = database
        configuration.lease = lease
        // A guard against a hang, not a bound: on a busy machine connecting can take a while.
        configuration.connectTimeout = .seconds(30)
        return configuration
    }

    /// Runs `body` with a fresh database of its own (dropped afterwards).
    static func withDatabase<T>(lease: Duration = .seconds(60), _ body: (ClusterConfiguration) async throws -> T) async throws -> T {
        let admin = try Self.configuration()
        let name = "canopy_test_\(UInt64.random(in: 0...UInt64.max))"
        try await Self.execute("CREATE DATABASE \(name)", admin)
        do {
            let result = try await body(try Self.configuration(database: name, lease: lease))
            try await Self.execute("DROP DATABASE \(name) WITH (FORCE)", admin)
            return result
        } catch {
            try? await Self.execute("DROP DATABASE \(name) WITH (FORCE)", admin)
            throw error
        }
    }

    /// Runs one statement on a connection of its own (`text` is the test's own, never user input).
    static func execute(_ text: String, _ configuration: ClusterConfiguration) async throws {
        let connection = try await Self.connect(configuration)
        do {
            try await connection.query(PostgresQuery(unsafeSQL: text), logger: Self.logger)
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
    }

    static func connect(_ configuration: ClusterConfiguration) async throws -> PostgresConnection {
        try await PostgresConnection.connect(
            configuration: PostgresConnection.Configuration(
                host: configuration.host, port: configuration.port, username: configuration.username, password: configuration.password,
                database: configuration.database, tls: .disable),
            id: 1, logger: Self.logger)
    }

    /// Ends node `id`'s PostgreSQL session from the server's side, as a SIGKILL of its process
    /// does (its advisory lock frees at once; its row stays, with its lease).
    static func killSession(ofNode id: Int32, _ configuration: ClusterConfiguration) async throws {
        // pg_terminate_backend signals the session; its lock frees when it has exited, which
        // `pg_terminate_backend(pid, timeout)` waits for (a hang guard of 60 s).
        try await Self.execute(
            """
            SELECT pg_terminate_backend(l.pid, 60000) FROM pg_locks l JOIN pg_database d ON d.oid = l.database
             WHERE d.datname = current_database() AND l.locktype = 'advisory' AND l.classid = 1130458735
               AND l.objid = \(id) AND l.objsubid = 2 AND l.granted
            """, configuration)
    }
}

/// A test's cluster: a store on a database of its own and `count` registered nodes (at
/// `127.0.0.N:port`), left and closed when the test ends.
struct TestCluster {
    var configuration: ClusterConfiguration
    var store: ClusterStore
    var nodes: [ClusterNode]

    /// The lease is long by default, so that a loaded machine's pauses never make a node look
    /// dead; a test of lease expiry gives a short one.
    static func with<T>(
        nodes count: Int, port: Int, lease: Duration = .seconds(60), _ body: (TestCluster) async throws -> T
    ) async throws -> T {
        try await ClusterHarness.withDatabase(lease: lease) { configuration in
            let store = try await ClusterStore.connect(configuration, logger: ClusterHarness.logger)
            var nodes: [ClusterNode] = []
            do {
                for index in 1...max(1, count) {
                    nodes.append(try await store.register(advertise: "http://127.0.0.\(index):\(port)", version: "0.1.0"))
                }
                let result = try await body(TestCluster(configuration: configuration, store: store, nodes: nodes))
                for node in nodes { await node.leave() }
                await store.close()
                return result
            } catch {
                for node in nodes { await node.leave() }
                await store.close()
                throw error
            }
        }
    }

    /// Expects `body` to fail with `code`.
    static func expectFailure(
        _ code: DatabaseError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
    ) async {
        do {
            try await body()
            Issue.record("expected a \(code) error, got none", sourceLocation: sourceLocation)
        } catch let error as DatabaseError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected a \(code) error, got \(error)", sourceLocation: sourceLocation)
        }
    }
}
