import CanopyCluster
import CanopyCore
import CanopyTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `canopy serve --cluster` set up wrongly: a one-line error and a non-zero exit, never a crash.
@Suite(.enabled(if: ClusterHarness.runnable, ClusterHarness.skipReason), .timeLimit(.minutes(2)))
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
        Self.expectOneLine(try Self.serve(["--cluster", configuration.description]), exit: 64, containing: "--advertise")
        Self.expectOneLine(
            try Self.serve(["--cluster", configuration.description, "--advertise", "127.0.0.1:9501"]), exit: 64,
            containing: "http://HOST:PORT")
        Self.expectOneLine(try Self.serve(["--advertise", "http://127.0.0.1:9501"]), exit: 64, containing: "--cluster")
        var wrong = configuration
        wrong.password = "wrong-password-78"
        let denied = try Self.serve(try ClusterCommandTests.arguments(wrong, passwordFile: directory.path + "/wrong") + advertise)
        Self.expectOneLine(denied, exit: 69, containing: "password authentication failed")
        #expect(!denied.stderr.contains("wrong-password-78"))
        let down = try Self.serve(["--cluster", "postgres://postgres@127.0.0.1:1/postgres"] + advertise)
        Self.expectOneLine(down, exit: 69, containing: "127.0.0.1:1")
    }

    @Test func twoNodesCannotAdvertiseTheSameAddress() async throws {
        try await ClusterHarness.withDatabase { configuration in
            let directory = TemporaryDirectory()
            let cluster = try ClusterCommandTests.arguments(configuration, passwordFile: directory.path + "/password")
            let first = ChildProcess()
            first.executableURL = URL(fileURLWithPath: builtExecutable("canopy"))
            first.arguments = ["serve", "--port", "0", "--advertise", "http://127.0.0.1:9502"] + cluster
            first.environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
            let stdout = Pipe()
            first.standardInput = FileHandle.nullDevice
            first.standardOutput = stdout
            first.standardError = FileHandle.nullDevice
            try first.run()
            defer {
                kill(first.processIdentifier, SIGTERM)
                first.waitUntilExit()
            }
            // Its first line: it registered and serves.
            var line = Data()
            while let byte = try stdout.fileHandleForReading.read(upToCount: 1), let b = byte.first, b != 0x0A { line.append(b) }
            #expect(String(decoding: line, as: UTF8.self).contains("serving node"))
            let second = try Self.serve(["--advertise", "http://127.0.0.1:9502"] + cluster)
            Self.expectOneLine(second, exit: 1, containing: "Another live node of the cluster advertises http://127.0.0.1:9502")
        }
    }
}
