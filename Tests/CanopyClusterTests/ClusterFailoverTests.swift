import CanopyCluster
import CanopyCore
import CanopyTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The cluster tests' Python scripts (`Interop/`), run with the interpreter `.ci/run` prepares.
enum ClusterScript {
    /// `.ci/postgres`, which creates, restarts and stops throwaway PostgreSQL servers.
    static let postgres = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../.ci/postgres")
        .standardized.path

    /// Runs `Interop/NAME.py ARGUMENTS` and expects exit status 0 and `marker` in its output.
    static func run(
        _ name: String, _ arguments: [String], expecting marker: String, environment: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        guard let python = PythonScript.python else {
            Issue.record("CANOPY_REQUIRE_INTEROP=1 but CANOPY_INTEROP_PYTHON is not set", sourceLocation: sourceLocation)
            return
        }
        let script = try #require(
            Bundle.module.path(forResource: name, ofType: "py", inDirectory: "Interop"), sourceLocation: sourceLocation)
        let (status, output) = try await PythonScript.run(
            python: python, script: script, arguments, timeout: .seconds(600), environment: environment)
        #expect(status == 0, "\(name).py failed:\n\(output)", sourceLocation: sourceLocation)
        #expect(output.contains(marker), "\(output)", sourceLocation: sourceLocation)
    }
}

/// Three `canopy serve --cluster` processes on 127.0.0.1-3 and real clients (firebase-admin over
/// REST, our SDK-protocol client over WebSocket), with the leader SIGKILLed again and again
/// (`Interop/cluster_failover.py`). `CANOPY_CLUSTER_KILLS` scales the number of kills (10 by default).
@Suite(ClusterHarness.needed(withPython: true))
struct ClusterFailoverTests {
    @Test func killingTheLeaderAgainAndAgainLosesNoAcknowledgedWrite() async throws {
        let kills = ProcessInfo.processInfo.environment["CANOPY_CLUSTER_KILLS"].flatMap { Int($0) } ?? 10
        try await ClusterHarness.withDatabase { configuration in
            let directory = TemporaryDirectory()
            let passwordFile = directory.path + "/password"
            try Data((configuration.password ?? "").utf8).write(to: URL(fileURLWithPath: passwordFile))
            try await ClusterScript.run(
                "cluster_failover", [builtExecutable("canopy"), configuration.description, passwordFile, "0", "\(kills)"],
                expecting: "cluster: failover ok")
        }
    }
}

/// A PostgreSQL of the test's own (`.ci/postgres start`), restarted while three nodes serve
/// writers: the nodes' sessions end (their advisory locks free), writes stall, then resume, and
/// nothing acknowledged is lost.
@Suite(ClusterHarness.needed(withPython: true))
struct ClusterPostgresRestartTests {
    @Test func writesStallThenResumeAndNothingAcknowledgedIsLost() async throws {
        let started = try runToExit("/bin/bash", [ClusterScript.postgres, "start"], waitingFor: ".ci/postgres start")
        #expect(started.status == 0, "\(started.stderr)")
        let exports = Dictionary(
            uniqueKeysWithValues: started.stdout.split(separator: "\n").compactMap { line -> (String, String)? in
                let parts = line.dropFirst("export ".count).split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { return nil }
                return (String(parts[0]), String(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "'"))))
            })
        let directory = try #require(exports["CANOPY_CLUSTER_DIR"])
        defer { _ = try? runToExit("/bin/bash", [ClusterScript.postgres, "stop", directory], waitingFor: ".ci/postgres stop") }
        let configuration = try ClusterConfiguration(url: try #require(exports["CANOPY_CLUSTER_URL"]), environment: [:])
        try await ClusterScript.run(
            "cluster_failover",
            [
                builtExecutable("canopy"), configuration.description, directory + "/password", "0", "2",
                "/bin/bash \(ClusterScript.postgres) restart \(directory)",
            ],
            expecting: "cluster: postgres restart ok")
    }
}

/// What the partition test needs: root and ip(8) (CI runs as root and sets
/// `CANOPY_REQUIRE_PARTITION=1`, which makes their absence a failure).
enum PartitionSupport {
    static var available: Bool { getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") }
    static var required: Bool { ProcessInfo.processInfo.environment["CANOPY_REQUIRE_PARTITION"] == "1" }
}

/// A leader cut from PostgreSQL but not from its clients, in a network namespace the test creates
/// (`Interop/cluster_partition.py`: `ip netns`, two veth pairs; root only, as CI runs): it
/// acknowledges nothing more, another node takes over once its lease has run out, every
/// acknowledged write survives, and healed it serves again.
@Suite(
    .enabled(
        if: ClusterHarness.runnable && (PythonScript.python != nil || PythonScript.required)
            && (PartitionSupport.available || PartitionSupport.required),
        "needs root and ip(8) for a network namespace (CANOPY_REQUIRE_PARTITION=1 makes their absence a failure)"))
struct ClusterPartitionTests {
    @Test func aLeaderCutFromPostgreSQLStopsAcknowledgingAndIsReplaced() async throws {
        guard PartitionSupport.available else {
            Issue.record("CANOPY_REQUIRE_PARTITION=1 but this is not root or /usr/sbin/ip is missing")
            return
        }
        try await ClusterScript.run(
            "cluster_partition", [builtExecutable("canopy"), ClusterScript.postgres], expecting: "cluster: partition ok",
            environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"])
    }
}
