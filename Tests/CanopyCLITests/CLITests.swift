import CanopyTestSupport
import Foundation
import Testing

/// The data commands on a temporary database directory, run through the built binary.
@Suite(.serialized)
struct DataCommandTests {
    @Test func setGetUpdatePushRemove() throws {
        let dir = TemporaryDirectory()
        let db = ["--db", dir.file("db")]
        var r = try canopy(["set", "users/ada", #"{"name": "Ada", "score": 36}"#] + db)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.isEmpty && r.stderr.isEmpty)
        r = try canopy(["get", "users/ada"] + db)
        #expect(r.output == #"{"name":"Ada","score":36}"#, "\(r)")

        r = try canopy(["update", "users/ada", #"{"score": 40, "stats/visits": 3}"#] + db)
        #expect(r.status == 0, "\(r)")
        r = try canopy(["get", "users/ada", "--pretty"] + db)
        #expect(r.output == "{\n  \"name\": \"Ada\",\n  \"score\": 40,\n  \"stats\": {\n    \"visits\": 3\n  }\n}", "\(r)")

        r = try canopy(["push", "messages", #""hi""#] + db)
        #expect(r.status == 0, "\(r)")
        let key = r.output
        #expect(key.count == 20, "\(r)")
        r = try canopy(["get", "messages"] + db)
        #expect(r.output == #"{"\#(key)":"hi"}"#, "\(r)")

        r = try canopy(["remove", "users/ada"] + db)
        #expect(r.status == 0, "\(r)")
        r = try canopy(["get", "users/ada"] + db)
        #expect(r.output == "null", "\(r)")
    }

    @Test func valuesFromStdinAndFileAndEnvironment() throws {
        let dir = TemporaryDirectory()
        var r = try canopy(["set", "greeting", "-"], input: #""hello""#, environment: ["CANOPY_DB": dir.file("env-db")])
        #expect(r.status == 0, "\(r)")
        try Data(#"{"a": 1, "b": [true, null, 2.5]}"#.utf8).write(to: URL(fileURLWithPath: dir.file("v.json")))
        r = try canopy(["set", "doc", "--file", dir.file("v.json")], environment: ["CANOPY_DB": dir.file("env-db")])
        #expect(r.status == 0, "\(r)")
        r = try canopy(["get", "/", "--db", dir.file("env-db")])
        #expect(r.output == #"{"doc":{"a":1,"b":[true,null,2.5]},"greeting":"hello"}"#, "\(r)")
        // The default directory is ./canopy-data.
        r = try canopy(["set", "x", "1"], directory: dir.path)
        #expect(r.status == 0, "\(r)")
        #expect(FileManager.default.fileExists(atPath: dir.file("canopy-data")))
    }

    @Test func queriesShallowAndExport() throws {
        let dir = TemporaryDirectory()
        let db = ["--db", dir.file("db")]
        var r = try canopy(
            ["set", "scores", #"{"ada": {"score": 36}, "bob": {"score": 12}, "cy": {"score": 50}, "dee": {"score": 20}}"#] + db)
        #expect(r.status == 0, "\(r)")
        r = try canopy(["get", "scores", "--order-by-child", "score", "--limit-to-last", "2"] + db)
        #expect(r.output == #"{"ada":{"score":36},"cy":{"score":50}}"#, "\(r)")
        r = try canopy(["get", "scores", "--order-by-child", "score", "--limit-to-first", "3"] + db)
        #expect(r.output == #"{"bob":{"score":12},"dee":{"score":20},"ada":{"score":36}}"#, "\(r)")
        r = try canopy(["get", "scores", "--order-by-key", "--start-after", #""bob""#, "--end-at", #""dee""#, "--shallow"] + db)
        #expect(r.output == #"{"cy":true,"dee":true}"#, "\(r)")
        r = try canopy(["get", "scores", "--order-by-child", "score", "--equal-to", "12"] + db)
        #expect(r.output == #"{"bob":{"score":12}}"#, "\(r)")
        r = try canopy(["get", "scores", "--order-by-child", "score", "--start-at", "50", "cy", "--pretty"] + db)
        #expect(r.output == "{\n  \"cy\": {\n    \"score\": 50\n  }\n}", "\(r)")
        r = try canopy(["get", "scores", "--shallow"] + db)
        #expect(r.output == #"{"ada":true,"bob":true,"cy":true,"dee":true}"#, "\(r)")
        r = try canopy(["get", "scores", "--order-by-child", "score", "--equal-to", "99"] + db)
        #expect(r.output == "null", "\(r)")

        r = try canopy(["set", "p", #"{".value": "x", ".priority": 3}"#] + db)
        #expect(r.status == 0, "\(r)")
        r = try canopy(["get", "p", "--export"] + db)
        #expect(r.output == #"{".value":"x",".priority":3}"#, "\(r)")
        r = try canopy(["get", "p"] + db)
        #expect(r.output == #""x""#, "\(r)")
    }

    @Test func exportImportRoundTrip() throws {
        let dir = TemporaryDirectory()
        var r = try canopy(["set", "/", #"{"a": {".value": 1, ".priority": "p"}, "b": {"c": [1, 2]}}"#, "--db", dir.file("one")])
        #expect(r.status == 0, "\(r)")
        r = try canopy(["export", "--output", dir.file("dump.json"), "--db", dir.file("one")])
        #expect(r.status == 0, "\(r)")
        r = try canopy(["import", "/", dir.file("dump.json"), "--db", dir.file("two")])
        #expect(r.status == 0, "\(r)")
        let first = try canopy(["export", "--db", dir.file("one")])
        let second = try canopy(["export", "--db", dir.file("two")])
        #expect(first.output == #"{"a":{".value":1,".priority":"p"},"b":{"c":{"0":1,"1":2}}}"#, "\(first)")
        #expect(first.output == second.output)
    }

    @Test func importLargeFile() throws {
        let dir = TemporaryDirectory()
        // About 6 MB: 60,000 children with a few fields each.
        var text = "{"
        for i in 0..<60_000 {
            if i > 0 { text += "," }
            text += #""item\#(i)":{"n":\#(i),"name":"entry number \#(i)","tags":{"even":\#(i % 2 == 0)},"w":\#(Double(i) / 8)}"#
        }
        text += "}"
        try Data(text.utf8).write(to: URL(fileURLWithPath: dir.file("big.json")))
        var r = try canopy(["import", "big", dir.file("big.json"), "--db", dir.file("db")])
        #expect(r.status == 0, "\(r)")
        r = try canopy(["get", "big/item59999", "--db", dir.file("db")])
        #expect(r.output == #"{"n":59999,"name":"entry number 59999","tags":{"even":false},"w":7499.875}"#, "\(r)")
        r = try canopy(["get", "big", "--order-by-child", "n", "--limit-to-last", "1", "--shallow", "--db", dir.file("db")])
        #expect(r.output == #"{"item59999":true}"#, "\(r)")
        r = try canopy(["info", "--json", "--db", dir.file("db")])
        // The root, big, 60,000 items with 4 members and a tags object each.
        #expect(r.output.contains(#""nodes":\#(2 + 60_000 * 6)"#), "\(r)")
        #expect(r.output.contains(#""leaves":\#(60_000 * 4)"#), "\(r)")

        // A broken file changes nothing.
        try Data((String(text.dropLast(10)) + "]").utf8).write(to: URL(fileURLWithPath: dir.file("broken.json")))
        r = try canopy(["import", "big", dir.file("broken.json"), "--db", dir.file("db")])
        #expect(r.status == 64, "\(r)")
        #expect(r.stderr.hasPrefix("canopy: Invalid JSON at line 1, column"), "\(r)")
        r = try canopy(["get", "big/item0/n", "--db", dir.file("db")])
        #expect(r.output == "0", "\(r)")
    }

    @Test func infoAndCompact() throws {
        let dir = TemporaryDirectory()
        let db = ["--db", dir.file("db")]
        for i in 0..<5 { _ = try canopy(["set", "n/\(i)", "\(i)"] + db) }
        var r = try canopy(["info"] + db)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("nodes        7 (5 leaves)"), "\(r)")
        #expect(r.stdout.contains("last write   #5"), "\(r)")
        #expect(r.stdout.contains("checkpoint   none yet"), "\(r)")
        r = try canopy(["compact"] + db)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.hasPrefix("checkpoint covers #5"), "\(r)")
        r = try canopy(["info", "--json"] + db)
        #expect(r.output.contains(#""checkpointWrite":5"#), "\(r)")
        r = try canopy(["get", "n"] + db)
        #expect(r.output == "[0,1,2,3,4]", "\(r)")
    }
}
