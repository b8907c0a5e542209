import CanopyCore
import CanopyStorage
import CanopyTestSupport
import Foundation
import Testing

/// Mistakes: one line on stderr (`canopy: …`), the documented exit code, nothing written.
@Suite(.serialized)
struct ErrorTests {
    struct Case: CustomStringConvertible {
        var arguments: [String]
        var status: Int32
        var message: String
        var description: String { arguments.joined(separator: " ") }
    }

    static let cases: [Case] = [
        Case(arguments: ["set", "users/ada", #"{"name": "Ada""#], status: 64, message: "Invalid JSON at line 1, column 15"),
        Case(arguments: ["set", "users/ada", "hello"], status: 64, message: "Invalid JSON at line 1, column 1"),
        Case(arguments: ["set", "users/a.b", "1"], status: 64, message: #"Invalid path "users/a.b""#),
        Case(arguments: ["set", "users", #"{"a$": 1}"#], status: 64, message: "a$"),
        Case(arguments: ["set", "users"], status: 64, message: "Missing the JSON value"),
        Case(arguments: ["set", "users", ""], status: 64, message: "The JSON value is empty"),
        Case(arguments: ["set", "users", "1", "--file", "x.json"], status: 64, message: "either as an argument or with --file"),
        Case(arguments: ["set", "users", "--file", "/nonexistent/x.json"], status: 64, message: "No such file: /nonexistent/x.json"),
        Case(arguments: ["update", "users", "[1, 2]"], status: 64, message: "update takes a JSON object"),
        Case(
            arguments: ["update", "users", #"{"a": 1, "a/b": 2}"#], status: 64,
            message: "contains a path /a that is ancestor of another path /a/b"),
        Case(arguments: ["push", "list", "{"], status: 64, message: "Invalid JSON"),
        Case(arguments: ["remove", "/"], status: 64, message: "add --yes"),
        Case(arguments: ["get", "a", "--order-by-key", "--order-by-value"], status: 64, message: "Use one of --order-by-key"),
        Case(arguments: ["get", "a", "--order-by-key", "--start-at", "1"], status: 64, message: "queryOrderedByKey"),
        Case(arguments: ["get", "a", "--limit-to-first", "0"], status: 64, message: "Limit can't be zero"),
        Case(
            arguments: ["get", "a", "--limit-to-first", "2", "--limit-to-last", "2"], status: 64,
            message: "Use --limit-to-first or --limit-to-last, not both: a query has one limit."),
        Case(
            arguments: ["get", "a", "--start-at", "1", "--start-after", "2"], status: 64,
            message: "Use --start-at or --start-after, not both"),
        Case(arguments: ["get", "a", "--end-at", "1", "--end-before", "2"], status: 64, message: "Use --end-at or --end-before, not both"),
        Case(
            arguments: ["observe", "a", "--equal-to", "1", "--end-at", "2"], status: 64,
            message: "Use --equal-to or --end-at, not both: --equal-to is both the start and the end."),
        Case(
            arguments: ["get", "a", "--limit", "3"], status: 64,
            message: "Unknown option '--limit': use --limit-to-first N or --limit-to-last N."),
        Case(
            arguments: ["get", "a", "--order-by", "score"], status: 64,
            message: "Unknown option '--order-by': use --order-by-child PATH, --order-by-key, --order-by-value or --order-by-priority."),
        Case(
            arguments: ["observe", "a", "--limitToLast=2"], status: 64, message: "Unknown option '--limitToLast': use --limit-to-last N."),
        Case(arguments: ["get", "a", "--orderBy", "score"], status: 64, message: "Unknown option '--orderBy': use --order-by-child PATH"),
        Case(arguments: ["get", "a", "--order-by-child", "$key"], status: 64, message: "Use queryOrderedByKey"),
        Case(arguments: ["get", "a", "--start-at", "ada"], status: 64, message: #"--start-at: ada is not a JSON value"#),
        Case(arguments: ["get", "a", "--equal-to", "{}"], status: 64, message: "a query bound is a string"),
        Case(arguments: ["get", "a", "--limit-to-first", "many"], status: 64, message: "--limit-to-first"),
        Case(arguments: ["get"], status: 64, message: "Missing expected argument '<path>'"),
        Case(arguments: ["get", "a", "--frobnicate"], status: 64, message: "Unknown option '--frobnicate'"),
        Case(arguments: ["frobnicate"], status: 64, message: "frobnicate"),
        Case(arguments: ["observe", "a", "--events", "child_added,bogus"], status: 64, message: #"unknown event "bogus""#),
        Case(arguments: ["get", "a", "--url", "ftp://x"], status: 64, message: "give an http:// address"),
        Case(arguments: ["get", "a", "--url", "http://127.0.0.1:1", "--db", "x"], status: 64, message: "either --db or --url"),
        Case(arguments: ["info", "--url", "http://127.0.0.1:1"], status: 64, message: "info works on a database directory"),
        Case(
            arguments: ["get", "a", "--url", "http://127.0.0.1:1"], status: 69,
            message: "Cannot reach the server at http://127.0.0.1:1: connection refused"),
        Case(arguments: ["set", "a", "1", "--url", "http://127.0.0.1:1"], status: 69, message: "Cannot reach the server"),
        Case(arguments: ["get", "a"], status: 1, message: "No database at"),
        Case(arguments: ["info"], status: 1, message: "No database at"),
    ]

    @Test(arguments: cases)
    func badInput(_ test: Case) throws {
        let dir = TemporaryDirectory()
        let r = try canopy(test.arguments, directory: dir.path)
        #expect(r.status == test.status, "\(r)")
        #expect(r.stdout.isEmpty, "\(r)")
        #expect(r.stderr.hasPrefix("canopy: "), "\(r)")
        #expect(r.stderr.filter { $0 == "\n" }.count == 1, "\(r)")
        #expect(r.stderr.contains(test.message), "\(r)")
        // Nothing written: not even the default data directory.
        #expect(!FileManager.default.fileExists(atPath: dir.file("canopy-data")), "\(r)")
    }

    @Test func badWriteLeavesDataAlone() throws {
        let dir = TemporaryDirectory()
        let db = ["--db", dir.file("db")]
        _ = try canopy(["set", "a", #"{"x": 1}"#] + db)
        var r = try canopy(["set", "a", #"{"x": 2, "y": {"bad.key": 1}}"#] + db)
        #expect(r.status == 64, "\(r)")
        r = try canopy(["update", "a", #"{"x": 2, "z": ["#] + db)
        #expect(r.status == 64, "\(r)")
        r = try canopy(["get", "a"] + db)
        #expect(r.output == #"{"x":1}"#, "\(r)")
    }

    @Test func databaseInUse() throws {
        let dir = TemporaryDirectory()
        _ = try canopy(["set", "a", "1", "--db", dir.file("db")])
        let lock = try DirectoryLock(directory: dir.file("db") + "/default")
        defer { lock.release() }
        for arguments in [["get", "a"], ["set", "a", "2"], ["info"], ["compact"], ["repair", "--yes"]] {
            let r = try canopy(arguments + ["--db", dir.file("db")])
            #expect(r.status == 1, "\(arguments): \(r)")
            #expect(r.stderr.hasPrefix("canopy: The database at \(dir.file("db"))/default is in use by pid \(getpid())"), "\(r)")
            #expect(r.stderr.filter { $0 == "\n" }.count == 1, "\(r)")
        }
    }
}

/// `canopy repair` and ``StorageRepair``: a journal damaged before its end is cut there.
@Suite(.serialized)
struct RepairTests {
    /// A database with `count` writes (one journal record each), and its journal file.
    func makeDatabase(_ dir: TemporaryDirectory, count: Int) throws -> String {
        for i in 1...count {
            let r = try canopy(["set", "n/\(i)", "\(i)", "--db", dir.file("db")])
            #expect(r.status == 0, "\(r)")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.file("db/default"))
        let journal = try #require(names.first { $0.hasPrefix("journal-") && $0.hasSuffix(".log") })
        return dir.file("db/default") + "/" + journal
    }

    /// Flips a byte inside record `index` (0-based) of the journal at `path`; returns its offset.
    func damageRecord(_ index: Int, of path: String) throws -> Int {
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var offset = JournalFormat.headerSize
        for _ in 0..<index {
            let length = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
            offset += JournalFormat.frameHeaderSize + length
        }
        bytes[offset + JournalFormat.frameHeaderSize + JournalFormat.payloadPrefixSize] ^= 0x5A
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return offset
    }

    @Test func intactJournal() throws {
        let dir = TemporaryDirectory()
        _ = try makeDatabase(dir, count: 3)
        #expect(try StorageRepair.inspect(directory: dir.file("db/default")) == nil)
        let r = try canopy(["repair", "--db", dir.file("db")])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("intact"), "\(r)")
    }

    @Test func cutsAtTheFirstBadRecord() throws {
        let dir = TemporaryDirectory()
        let journal = try makeDatabase(dir, count: 5)
        let size = try #require(FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int)
        let offset = try damageRecord(2, of: journal)

        var r = try canopy(["get", "n", "--db", dir.file("db")])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("is damaged at offset \(offset)"), "\(r)")
        #expect(r.stderr.contains("canopy repair"), "\(r)")

        let damage = try #require(try StorageRepair.inspect(directory: dir.file("db/default")))
        #expect(damage.offset == offset)
        #expect(damage.lastKeptSequence == 2)
        #expect(damage.keptRecords == 2)
        #expect(!damage.isTornTail)
        #expect(damage.bytesCut == size - offset)

        // No terminal and no --yes: refused, nothing changed.
        r = try canopy(["repair", "--db", dir.file("db")])
        #expect(r.status == 64, "\(r)")
        #expect(r.stderr.contains("add --yes"), "\(r)")
        #expect(try FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int == size)

        r = try canopy(["repair", "--yes", "--db", dir.file("db")])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("at offset \(offset)"), "\(r)")
        #expect(r.stdout.contains("Repaired"), "\(r)")
        #expect(try FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int == offset)
        let backups = try FileManager.default.contentsOfDirectory(atPath: dir.file("db/default")).filter { $0.contains(".bak-") }
        #expect(backups.count == 1)
        let backup = try Data(contentsOf: URL(fileURLWithPath: dir.file("db/default") + "/" + backups[0]))
        #expect(backup.count == size)

        r = try canopy(["get", "n", "--db", dir.file("db")])
        #expect(r.output == "[null,1,2]", "\(r)")
        // And the database takes writes again.
        r = try canopy(["set", "n/3", "30", "--db", dir.file("db")])
        #expect(r.status == 0, "\(r)")
        r = try canopy(["get", "n/3", "--db", dir.file("db")])
        #expect(r.output == "30", "\(r)")
    }

    @Test func damagedHeaderMovesTheFileAway() throws {
        let dir = TemporaryDirectory()
        let journal = try makeDatabase(dir, count: 2)
        _ = try canopy(["compact", "--db", dir.file("db")])
        _ = try canopy(["set", "n/3", "3", "--db", dir.file("db")])
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.file("db/default"))
        let newest = try #require(names.filter { $0.hasPrefix("journal-") && $0.hasSuffix(".log") }.sorted().last)
        _ = journal
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir.file("db/default") + "/" + newest)))
        bytes[0] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: dir.file("db/default") + "/" + newest))
        let damage = try #require(try StorageRepair.inspect(directory: dir.file("db/default")))
        #expect(damage.offset == 0)
        #expect(damage.file == newest)
        let report = try StorageRepair.repair(damage, backupSuffix: ".bak-test")
        #expect(report.backups == [newest + ".bak-test"])
        #expect(!report.truncated)
        let r = try canopy(["get", "n", "--db", dir.file("db")])
        #expect(r.output == "[null,1,2]", "\(r)")
    }
}
