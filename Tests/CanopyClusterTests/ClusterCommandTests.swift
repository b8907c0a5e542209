import CanopyCluster
import CanopyCore
import CanopyTestSupport
import Foundation
import NIOCore
import Testing

/// `canopy cluster status` and `canopy cluster move`, run as a user runs them.
@Suite(ClusterHarness.needed(), .timeLimit(.minutes(2)))
struct ClusterCommandTests {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs the built `canopy` with `arguments` (stdout and stderr to files: no pipe to drain).
    static func canopy(_ arguments: [String]) throws -> Run {
        let directory = TemporaryDirectory()
        let out = directory.path + "/out"
        let err = directory.path + "/err"
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: builtExecutable("canopy"))
        process.arguments = arguments
        process.environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
        try process.run()
        let watchdog = ProcessWatchdog(process, "canopy \(arguments.first ?? "") to exit")
        process.waitUntilExit()
        try watchdog.check()
        return Run(
            status: process.terminationStatus, stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }

    /// The URL of `configuration`'s database, with the password in a file rather than the URL.
    static func arguments(_ configuration: ClusterConfiguration, passwordFile: String) throws -> [String] {
        try Data((configuration.password ?? "").utf8).write(to: URL(fileURLWithPath: passwordFile))
        return ["--cluster", configuration.description, "--cluster-password-file", passwordFile]
    }

    @Test func statusListsNodesAndNamespacesAndMoveHandsOneOver() async throws {
        try await TestCluster.with(nodes: 2, port: 9401) { testCluster in
            let (store, a, b, configuration) = (testCluster.store, testCluster.nodes[0], testCluster.nodes[1], testCluster.configuration)
            let lease = try #require(try await store.acquire("blog", by: a))
            try await store.append((1...5).map { _ in .init(string: "w") }, from: 1, under: lease)
            try await store.writeCheckpoint(.init(string: "tree"), through: 3, under: lease)
            let directory = TemporaryDirectory()
            let cluster = try Self.arguments(configuration, passwordFile: directory.path + "/pg-password")

            let json = try Self.canopy(["cluster", "status", "--json"] + cluster)
            #expect(json.status == 0, "\(json.stderr)")
            let status = try JSONDecoder().decode(ClusterStatus.self, from: Data(json.stdout.utf8))
            #expect(status.nodes.map(\.advertise) == ["http://127.0.0.1:9401", "http://127.0.0.2:9401"])
            let allAlive = status.nodes.allSatisfy { $0.alive }
            #expect(allAlive)
            let blog = try #require(status.namespaces.first)
            #expect(status.namespaces.count == 1)
            #expect(blog.name == "blog" && blog.leader == a.id && blog.leaderAlive && blog.epoch == lease.epoch)
            #expect(blog.head == 5 && blog.checkpoint == 3 && blog.logRecords == 2 && blog.checkpointAgeSeconds != nil)

            let text = try Self.canopy(["cluster", "status"] + cluster)
            #expect(text.status == 0)
            #expect(text.stdout.contains("blog  leader #\(a.id) http://127.0.0.1:9401  epoch \(lease.epoch)  head #5"))
            // The password is in no output.
            #expect(!(text.stdout + text.stderr + json.stdout).contains(configuration.password ?? "\u{0}"))

            let move = try Self.canopy(["cluster", "move", "blog", "--to", "\(b.id)"] + cluster)
            #expect(move.status == 0, "\(move.stderr)")
            #expect(try await store.leader(of: "blog")?.node == b.id)
            await TestCluster.expectFailure(.notLeader) { try await store.append([.init(string: "late")], from: 6, under: lease) }
        }
    }

    @Test func badSetUpIsOneLineAndANonZeroExit() async throws {
        let configuration = try ClusterHarness.configuration()
        let directory = TemporaryDirectory()
        var wrong = configuration
        wrong.password = "wrong-password-77"
        let denied = try Self.canopy(["cluster", "status"] + Self.arguments(wrong, passwordFile: directory.path + "/wrong"))
        #expect(denied.status == 69)
        #expect(denied.stderr.contains("password authentication failed") && !denied.stderr.contains("wrong-password-77"))
        #expect(denied.stderr.split(separator: "\n").count == 1)
        let badURL = try Self.canopy(["cluster", "status", "--cluster", "mysql://nobody@somewhere/db"])
        #expect(badURL.status == 64)
        #expect(badURL.stderr.contains("postgres://USER@HOST:PORT/DATABASE"))
        let missing = try Self.canopy([
            "cluster", "status", "--cluster", configuration.description, "--cluster-password-file", "/nonexistent/pw",
        ])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("no such file"))
        let down = try Self.canopy(["cluster", "status", "--cluster", "postgres://postgres@127.0.0.1:1/postgres"])
        #expect(down.status == 69)
        #expect(down.stderr.contains("127.0.0.1:1"))
    }
}
