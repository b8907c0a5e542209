import Canopy
import CanopyTestSupport
import Foundation
import Testing

/// `canopy serve --jwt-secret-file`, `--jwt-keys` and `--allow-unsigned-tokens`.
@Suite(.serialized)
struct ServeTokenTests {
    @Test(arguments: [
        ["--jwt-secret-file", "/nonexistent/secret"], ["--jwt-keys", "/nonexistent/keys.pem"], ["--auth-token-file", "/nonexistent/token"],
    ])
    func unreadableFile(_ option: [String]) throws {
        let dir = TemporaryDirectory()
        let r = try canopy(["serve", "--port", "0"] + option, directory: dir.path)
        #expect(r.status == 64, "\(r)")
        #expect(r.stdout.isEmpty, "\(r)")
        #expect(r.stderr == "canopy: \(option[0]) \(option[1]): no such file.\n", "\(r)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("canopy-data")), "\(r)")
    }

    @Test("--auth-token-file: the admin token from a file, kept off the command line")
    func authTokenFile() throws {
        let dir = TemporaryDirectory()
        try "token-from-a-file-0123456789\n".write(toFile: dir.file("token"), atomically: true, encoding: .utf8)
        let server = try RunningTool(["serve", "--db", dir.file("db"), "--port", "0", "--auth-token-file", dir.file("token")])
        defer { _ = try? server.stop() }
        let line = try server.waitForLines(1)[0]
        let port = try #require(line.split(separator: ":").last.flatMap { Int($0) }, "\(line)")
        #expect(try httpRequest(port: port, method: "GET", target: "/.json").status == 401)
        let admitted = try httpRequest(
            port: port, method: "GET", target: "/.json", headers: [("Authorization", "Bearer token-from-a-file-0123456789")])
        #expect(admitted.status == 200, "\(admitted)")

        try "\n".write(toFile: dir.file("empty"), atomically: true, encoding: .utf8)
        var r = try canopy(["serve", "--port", "0", "--auth-token-file", dir.file("empty")], directory: dir.path)
        #expect(r.status == 64 && r.stderr == "canopy: The admin token (--auth-token-file) is empty or not UTF-8 text.\n", "\(r)")
        r = try canopy(["serve", "--port", "0", "--auth-token", "x", "--auth-token-file", dir.file("token")], directory: dir.path)
        #expect(r.status == 64 && r.stderr == "canopy: Use either --auth-token or --auth-token-file.\n", "\(r)")
    }

    @Test func badKeyFile() throws {
        let dir = TemporaryDirectory()
        try "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----\n".write(
            toFile: dir.file("keys.pem"), atomically: true, encoding: .utf8)
        try "\n".write(toFile: dir.file("empty-secret"), atomically: true, encoding: .utf8)
        var r = try canopy(["serve", "--port", "0", "--jwt-keys", dir.file("keys.pem")], directory: dir.path)
        #expect(r.status == 64, "\(r)")
        #expect(r.stderr.hasPrefix("canopy: --jwt-keys: the PEM block (PRIVATE KEY) is a private key"), "\(r)")
        #expect(r.stderr.filter { $0 == "\n" }.count == 1, "\(r)")
        #expect(!r.stderr.contains("MIIEvQIBADANBg"), "\(r)")
        r = try canopy(["serve", "--port", "0", "--jwt-secret-file", dir.file("empty-secret")], directory: dir.path)
        #expect(r.status == 64, "\(r)")
        #expect(r.stderr == "canopy: The JWT secret (--jwt-secret-file) is empty.\n", "\(r)")
    }

    @Test func startUpLineWarnsOfUnsignedTokens() throws {
        let dir = TemporaryDirectory()
        try "a-secret-for-the-start-up-line-test\n".write(toFile: dir.file("secret"), atomically: true, encoding: .utf8)
        for (flags, warns) in [([String](), false), (["--allow-unsigned-tokens"], true)] {
            let server = try RunningTool(["serve", "--db", dir.file("db"), "--port", "0", "--jwt-secret-file", dir.file("secret")] + flags)
            let line = try server.waitForLines(1)[0]
            #expect(line.contains("WARNING: --allow-unsigned-tokens") == warns, "\(line)")
            #expect(line.hasPrefix("canopy \(CanopyVersion.current): "), "\(line)")
            #expect(line.range(of: #"serving \S+ on http://127\.0\.0\.1:\d+$"#, options: .regularExpression) != nil, "\(line)")
            #expect(try server.stop() == 0)
        }
    }
}
