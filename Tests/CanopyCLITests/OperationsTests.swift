import CanopyTestSupport
import Foundation
import Testing

/// The systemd unit the DocC article *Operations* gives (`Samples/systemd/canopy.service`): its
/// `ExecStart` command line, with its paths moved into a temporary directory and a free port,
/// starts a guarded server on loopback that keeps its data where the unit says.
@Suite(.serialized)
struct OperationsTests {
    static let unit = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Samples/systemd/canopy.service")

    @Test("the unit's ExecStart starts a guarded loopback server that keeps its data in its state directory")
    func unitCommandLine() throws {
        let text = try String(contentsOf: Self.unit, encoding: .utf8)
        let execStart = try #require(text.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        var arguments = execStart.dropFirst("ExecStart=".count).split(separator: " ").map(String.init)
        #expect(arguments.first == "/usr/local/bin/canopy" && arguments.dropFirst().first == "serve", "\(arguments)")
        arguments.removeFirst()
        func value(_ option: String) -> String? {
            arguments.firstIndex(of: option).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
        }
        #expect(value("--host") == "127.0.0.1", "loopback unless told")
        #expect(value("--db") == "/var/lib/canopy" && text.contains("StateDirectory=canopy"))
        #expect(value("--auth-token-file") != nil && !arguments.contains("--auth-token"), "the token from a file, not the command line")

        let dir = TemporaryDirectory()
        try "unit-test-admin-token-0123456789\n".write(toFile: dir.file("admin-token"), atomically: true, encoding: .utf8)
        let replacements = ["--db": dir.file("state"), "--auth-token-file": dir.file("admin-token"), "--port": "0"]
        for (option, replacement) in replacements {
            let index = try #require(arguments.firstIndex(of: option), "\(option) in \(arguments)")
            arguments[index + 1] = replacement
        }
        let server = try RunningTool(arguments)
        defer { _ = try? server.stop(SIGTERM) }
        let line = try server.waitForLines(1)[0]
        #expect(line.contains("on http://127.0.0.1:"), "\(line)")
        let port = try #require(line.split(separator: ":").last.flatMap { Int($0) }, "\(line)")
        #expect(try httpRequest(port: port, method: "PUT", target: "/a.json", body: Array("1".utf8)).status == 401)
        let put = try httpRequest(
            port: port, method: "PUT", target: "/a.json", body: Array("1".utf8),
            headers: [("Authorization", "Bearer unit-test-admin-token-0123456789")])
        #expect(put.status == 200, "\(put)")
        #expect(try server.stop(SIGTERM) == 0, "SIGTERM (the unit's KillSignal) stops it cleanly")
        #expect(FileManager.default.fileExists(atPath: dir.file("state/default")), "the namespace lives in the state directory")
    }
}
