import CanopyCore
import CanopyTestSupport
import Foundation
import Testing

/// `canopy backup` of a running server while it takes writes, and `canopy restore` onto a new
/// server: consistent snapshots, every namespace's data (priorities included) and rules back.
@Suite(.serialized)
struct BackupRestoreTests {
    static let token = "backup-test-admin-token-0123456789"
    static let rules = #"{"rules": {".read": true, /* kept as written */ ".write": "auth != null"}}"#

    /// A server with the admin token; its URL and port.
    static func serve(_ directory: String) throws -> (RunningTool, String, Int) {
        let server = try RunningTool(["serve", "--db", directory, "--port", "0", "--auth-token", token])
        let line = try server.waitForLines(1)[0]
        guard let start = line.range(of: "http://"), let colon = line.range(of: ":", options: .backwards),
            let port = Int(line[colon.upperBound...])
        else { throw ToolFailure("unexpected serve output: \(line)") }
        return (server, String(line[start.lowerBound...]), port)
    }

    static func request(_ port: Int, _ method: String, _ target: String, _ body: String? = nil) throws -> HTTPReply {
        try httpRequest(
            port: port, method: method, target: target, body: body.map { Array($0.utf8) }, headers: [("Authorization", "Bearer \(token)")])
    }

    @Test("a backup taken during writes is consistent per namespace and restores onto a new server exactly")
    func backupDuringWritesAndRestore() throws {
        let dir = TemporaryDirectory()
        let (source, sourceURL, sourcePort) = try Self.serve(dir.file("source"))
        defer { _ = try? source.stop() }
        let blog = #"{"posts": {"p1": {".priority": 2, "title": "Hello"}, "p2": {"title": "Again", "tags": ["a", "b"]}}}"#
        #expect(try Self.request(sourcePort, "PUT", "/.json?ns=blog", blog).status == 200)
        #expect(try Self.request(sourcePort, "PUT", "/.settings/rules.json?ns=blog", Self.rules).status == 200)
        #expect(try Self.request(sourcePort, "PUT", "/counters.json?ns=shop", #"{"a": 0, "b": 0}"#).status == 200)

        // A writer keeps both counters equal, one multi-path update at a time, while the backup runs.
        let running = Locked(true)
        let written = Locked(0)
        let writer = Thread {
            var i = 1
            while running.value && i <= 20_000 {
                guard (try? Self.request(sourcePort, "PATCH", "/counters.json?ns=shop", #"{"a": \#(i), "b": \#(i)}"#))?.status == 200 else {
                    break
                }
                written.withLock { $0 = i }
                i += 1
            }
        }
        writer.start()
        defer { running.withLock { $0 = false } }
        try waitUntil("the writer's first update") { written.value > 0 }
        let backup = dir.file("backup")
        let r = try canopy(["backup", backup, "--url", sourceURL, "--auth-token", Self.token])
        let writtenAtBackup = written.value
        running.withLock { $0 = false }
        try waitUntil("the writer to stop") { writer.isFinished }
        #expect(r.status == 0 && r.stdout.hasPrefix("backed up 3 namespaces"), "\(r)")
        #expect(dir.names.contains("backup"))
        let names = try FileManager.default.contentsOfDirectory(atPath: backup).sorted()
        #expect(
            names == [
                "blog.json", "blog.rules.json", "default.json", "default.rules.json", "manifest.json", "shop.json", "shop.rules.json",
            ])
        let manifest = try #require(parseTree(try String(contentsOfFile: backup + "/manifest.json", encoding: .utf8)))
        #expect(manifest["namespaces"] == .array(["blog", "default", "shop"]))
        #expect(manifest["canopy"] == .string(CanopyVersion.current))

        // Consistent: the counters were saved from one moment, between two updates.
        let shop = try #require(parseTree(try String(contentsOfFile: backup + "/shop.json", encoding: .utf8)))
        let a = try #require(shop["counters"]?["a"])
        #expect(a == shop["counters"]?["b"], "\(shop)")
        guard case .int(let saved) = a else {
            Issue.record("counter \(a)")
            return
        }
        #expect(saved >= 1 && saved <= Int64(writtenAtBackup) + 1, "saved \(saved), written \(writtenAtBackup)")
        // Priorities and the rules' text (comments included) are kept.
        let blogSaved = try String(contentsOfFile: backup + "/blog.json", encoding: .utf8)
        #expect(parseTree(blogSaved) == parseTree(try Self.request(sourcePort, "GET", "/.json?ns=blog&format=export").text))
        #expect(parseTree(blogSaved)?["posts"]?["p1"]?[".priority"] == .int(2))
        #expect(try String(contentsOfFile: backup + "/blog.rules.json", encoding: .utf8) == Self.rules)

        // Restore onto a new server: every namespace's data and rules.
        let (target, targetURL, targetPort) = try Self.serve(dir.file("target"))
        defer { _ = try? target.stop() }
        let restored = try canopy(["restore", backup, "--url", targetURL, "--auth-token", Self.token])
        #expect(restored.status == 0 && restored.stdout.hasPrefix("restored 3 namespaces"), "\(restored)")
        for name in ["blog", "default", "shop"] {
            let saved = try String(contentsOfFile: backup + "/\(name).json", encoding: .utf8)
            #expect(parseTree(try Self.request(targetPort, "GET", "/.json?ns=\(name)&format=export").text) == parseTree(saved), "\(name)")
        }
        #expect(try Self.request(targetPort, "GET", "/.settings/rules.json?ns=blog").text == Self.rules)
        // The restored rules are in force: a write without auth is refused.
        #expect(try httpRequest(port: targetPort, method: "PUT", target: "/posts/p3.json?ns=blog", body: Array("1".utf8)).status == 401)
    }

    @Test("restore checks every file before sending anything; backup refuses a non-empty directory and a missing token")
    func refusals() throws {
        let dir = TemporaryDirectory()
        let (server, url, port) = try Self.serve(dir.file("db"))
        defer { _ = try? server.stop() }
        #expect(try Self.request(port, "PUT", "/.json?ns=blog", #"{"kept": true}"#).status == 200)
        let backup = dir.file("backup")
        #expect(try canopy(["backup", backup, "--url", url, "--auth-token", Self.token]).status == 0)
        #expect(try Self.request(port, "PUT", "/.json?ns=blog", #"{"changed": true}"#).status == 200)

        // A damaged rules file in the backup: nothing is restored, not even the namespaces before it.
        try Data(#"{"rules": {".read": tru"#.utf8).write(to: URL(fileURLWithPath: backup + "/default.rules.json"))
        var r = try canopy(["restore", backup, "--url", url, "--auth-token", Self.token])
        #expect(r.status == 64 && r.stderr.hasPrefix("canopy: \(backup)/default.rules.json:1:"), "\(r)")
        #expect(parseTree(try Self.request(port, "GET", "/.json?ns=blog").text) == parseTree(#"{"changed": true}"#))
        // One namespace of it, whose files are intact, restores.
        r = try canopy(["restore", backup, "--url", url, "--auth-token", Self.token, "--namespace", "blog"])
        #expect(r.status == 0, "\(r)")
        #expect(parseTree(try Self.request(port, "GET", "/.json?ns=blog").text) == parseTree(#"{"kept": true}"#))
        r = try canopy(["restore", backup, "--url", url, "--auth-token", Self.token, "--namespace", "nope"])
        #expect(r.status == 64 && r.stderr == "canopy: The backup in \(backup) has no namespace nope (it has blog, default).\n", "\(r)")
        r = try canopy(["restore", dir.file("none"), "--url", url])
        #expect(r.status == 64 && r.stderr.contains("is not a backup: it has no manifest.json"), "\(r)")

        r = try canopy(["backup", backup, "--url", url, "--auth-token", Self.token])
        #expect(r.status == 64 && r.stderr == "canopy: \(backup) is not empty; give a new or empty directory.\n", "\(r)")
        // Without the admin token the server refuses, and no directory is left behind.
        r = try canopy(["backup", dir.file("denied"), "--url", url])
        #expect(r.status == 1 && r.stderr.contains("HTTP 401"), "\(r)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("denied")))
    }
}
