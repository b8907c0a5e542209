import CanopyTestSupport
import Foundation
import Testing

/// `canopy rules get` and `canopy rules set` against a spawned `canopy serve` with an admin token.
@Suite(.serialized)
struct RulesServerCommandTests {
    static let token = "s3cret-admin"

    static let good = """
        {
          "rules": {
            "users": { "$uid": { ".read": "auth.uid == $uid", ".write": "auth.uid == $uid" } }
          }
        }
        """

    /// Valid JSON with a "rules" object (what the server's own check on main accepts) whose
    /// expression names an unknown variable: only the local check refuses it.
    static let badExpression = """
        {
          "rules": {
            ".read": "skies === 'blue'"
          }
        }
        """

    @Test func getAndSet() throws {
        let dir = TemporaryDirectory()
        let server = try RunningTool(["serve", "--db", dir.file("db"), "--port", "0", "--auth-token", Self.token])
        defer { _ = try? server.stop() }
        let line = try server.waitForLines(1)[0]
        let start = try #require(line.range(of: "http://"), "\(line)")
        let url = String(line[start.lowerBound...])
        let remote = ["--url", url, "--auth-token", Self.token]
        try Data(Self.good.utf8).write(to: URL(fileURLWithPath: dir.file("good.rules.json")))
        try Data(Self.badExpression.utf8).write(to: URL(fileURLWithPath: dir.file("bad.rules.json")))

        var r = try canopy(["rules", "get"] + remote)
        #expect(r.status == 0, "\(r)")
        let defaults = parseTree(r.stdout)
        // A server with an admin token starts its namespaces locked.
        #expect(defaults == parseTree(#"{"rules": {".read": false, ".write": false}}"#), "\(r)")

        r = try canopy(["rules", "set", dir.file("good.rules.json")] + remote)
        #expect(r.status == 0 && r.stdout.isEmpty && r.stderr.isEmpty, "\(r)")
        r = try canopy(["rules", "get"] + remote)
        #expect(r.status == 0, "\(r)")
        #expect(parseTree(r.stdout) != nil && parseTree(r.stdout) == parseTree(Self.good), "\(r)")
        // Kept durably where the server keeps rules.
        #expect(FileManager.default.fileExists(atPath: dir.file("db/default.rules.json")))

        // A bad file: one line naming the line, column and expression; nothing sent.
        r = try canopy(["rules", "set", dir.file("bad.rules.json")] + remote)
        #expect(r.status == 64, "\(r)")
        #expect(
            r.stderr == "canopy: \(dir.file("bad.rules.json")):3:15: Unknown variable 'skies' in .read at /: skies === 'blue'\n", "\(r)")
        r = try canopy(["rules", "get"] + remote)
        #expect(parseTree(r.stdout) == parseTree(Self.good), "the server's rules changed: \(r)")
        r = try canopy(["rules", "set", "-"] + remote, input: "{\"rules\": {\".read\": \"true\"")
        #expect(r.status == 64 && r.stderr.hasPrefix("canopy: <stdin>:1:"), "\(r)")
        r = try canopy(["rules", "get"] + remote)
        #expect(parseTree(r.stdout) == parseTree(Self.good), "the server's rules changed: \(r)")

        // From stdin, into another namespace; the default one keeps its rules.
        r = try canopy(["rules", "set", "-", "--namespace", "blog"] + remote, input: #"{"rules": {".read": "auth != null"}}"#)
        #expect(r.status == 0, "\(r)")
        r = try canopy(["rules", "get", "--namespace", "blog"] + remote)
        #expect(parseTree(r.stdout) == parseTree(#"{"rules": {".read": "auth != null"}}"#), "\(r)")
        r = try canopy(["rules", "get"] + remote)
        #expect(parseTree(r.stdout) == parseTree(Self.good), "\(r)")

        // The token from the environment.
        r = try canopy(["rules", "get", "--url", url], environment: ["CANOPY_AUTH_TOKEN": Self.token])
        #expect(parseTree(r.stdout) == parseTree(Self.good), "\(r)")

        // Refused by the server (no token): one line, exit 1, rules unchanged.
        r = try canopy(["rules", "set", dir.file("good.rules.json"), "--url", url, "--namespace", "blog"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.hasPrefix("canopy: The server refused the request (HTTP 401): "), "\(r)")
        #expect(r.stderr.split(separator: "\n").count == 1, "\(r)")
        r = try canopy(["rules", "get", "--namespace", "blog"] + remote)
        #expect(parseTree(r.stdout) == parseTree(#"{"rules": {".read": "auth != null"}}"#), "\(r)")
    }

    @Test func unreachableServer() throws {
        let r = try canopy(["rules", "get", "--url", "http://127.0.0.1:1"])
        #expect(r.status == 69, "\(r)")
        #expect(r.stderr == "canopy: Cannot reach the server at http://127.0.0.1:1: connection refused.\n", "\(r)")
    }
}
