import CanopyTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `canopy get` and `canopy observe` with aggregate flags, on a database directory and against
/// `canopy serve`.
@Suite(.serialized)
struct AggregateCLITests {
    static let ratings = #"{"a": {"stars": 5}, "b": {"stars": 3}, "c": {"stars": 4.5}, "d": {"stars": 1}, "e": {"text": "none"}}"#
    static let flags = ["--count", "--sum", "stars", "--avg", "stars", "--min", "stars", "--max", "stars"]

    @Test func getOnADirectoryAndAServer() throws {
        let dir = TemporaryDirectory()
        let db = ["--db", dir.file("db")]
        #expect(try canopy(["set", "ratings", Self.ratings] + db).status == 0)
        let whole = try canopy(["get", "ratings"] + Self.flags + db)
        #expect(whole.status == 0, "\(whole)")
        #expect(whole.output == #"{"avg(stars)":3.375,"count":5,"max(stars)":5,"min(stars)":1,"sum(stars)":13.5}"#)
        let ranged = try canopy(["get", "ratings", "--order-by-child", "stars", "--start-at", "3", "--count", "--sum", "stars"] + db)
        #expect(ranged.output == #"{"count":3,"sum(stars)":12.5}"#, "\(ranged)")
        // A child key in a bound works locally.
        let keyed = try canopy(["get", "ratings", "--order-by-child", "stars", "--start-at", "3", "b", "--count"] + db)
        #expect(keyed.output == #"{"count":3}"#, "\(keyed)")

        let (server, url) = try startServer(dir.file("served"))
        defer { _ = try? server.stop(SIGTERM) }
        #expect(try canopy(["set", "ratings", Self.ratings, "--url", url]).status == 0)
        let remote = try canopy(["get", "ratings"] + Self.flags + ["--url", url])
        #expect(remote.output == whole.output, "\(remote)")
        let remoteRanged = try canopy(
            ["get", "ratings", "--order-by-child", "stars", "--start-at", "3", "--count", "--sum", "stars", "--url", url])
        #expect(remoteRanged.output == ranged.output, "\(remoteRanged)")
        let limited = try canopy(["get", "ratings", "--order-by-key", "--limit-to-first", "2", "--avg", "stars", "--url", url])
        #expect(limited.output == #"{"avg(stars)":4}"#, "\(limited)")
        // REST bounds take no child key: a clear usage error, not a wrong answer.
        let refused = try canopy(["get", "ratings", "--order-by-child", "stars", "--start-at", "3", "b", "--count", "--url", url])
        #expect(refused.status == 64 && refused.stderr.contains("child key"), "\(refused)")
    }

    @Test func badAggregateFlags() throws {
        let dir = TemporaryDirectory()
        let db = ["--db", dir.file("db")]
        #expect(try canopy(["set", "ratings", Self.ratings] + db).status == 0)
        for (arguments, part) in [
            (["--sum", "a.b"], "sum(a.b)"), (["--avg", ""], "avg()"), (["--count", "--shallow"], "--shallow"),
            (["--sum", "$key"], "sum($key)"),
        ] {
            let r = try canopy(["get", "ratings"] + arguments + db)
            #expect(r.status != 0, "\(arguments): \(r)")
            #expect(r.stderr.contains(part), "\(arguments): \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count <= 3, "\(arguments): \(r.stderr)")
        }
    }

    @Test func observeFollowsAServer() throws {
        let dir = TemporaryDirectory()
        let (server, url) = try startServer(dir.file("served"))
        defer { _ = try? server.stop(SIGTERM) }
        func write(_ arguments: [String]) throws { try canopySucceeds(arguments + ["--url", url]) }
        try write(["set", "ratings", Self.ratings])
        let observer = try RunningTool(
            ["observe", "ratings", "--order-by-child", "stars", "--start-at", "3", "--count", "--avg", "stars", "--url", url])
        var expected = [#"{"avg(stars)":4.166666666666667,"count":3}"#]
        #expect(try observer.waitForLines(1) == expected)
        try write(["set", "ratings/d/stars", "4"])
        expected.append(#"{"avg(stars)":4.125,"count":4}"#)
        #expect(try observer.waitForLines(2) == expected)
        // A write that leaves the value as it is prints nothing; the next line is the next change.
        try write(["set", "ratings/a/text", #""great""#])
        try write(["remove", "ratings/c"])
        expected.append(#"{"avg(stars)":4,"count":3}"#)
        #expect(try observer.waitForLines(3) == expected)
        #expect(try observer.stop(SIGINT) == 0, "\(observer.errorOutput)")
    }

    @Test func observeOnADirectory() throws {
        let dir = TemporaryDirectory()
        let db = ["--db", dir.file("db")]
        #expect(try canopy(["set", "ratings", Self.ratings] + db).status == 0)
        let observer = try RunningTool(["observe", "ratings", "--count", "--max", "stars"] + db)
        #expect(try observer.waitForLines(1) == [#"{"count":5,"max(stars)":5}"#])
        #expect(try observer.stop(SIGINT) == 0, "\(observer.errorOutput)")
        #expect(observer.errorOutput.isEmpty)
    }
}
