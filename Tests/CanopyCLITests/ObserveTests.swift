import CanopyTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `canopy observe`: JSON lines for a scripted sequence of writes, on a directory and live
/// against `canopy serve`.
@Suite(.serialized)
struct ObserveTests {
    @Test func initialEventsOnADirectory() throws {
        let dir = TemporaryDirectory()
        let db = ["--db", dir.file("db")]
        _ = try canopy(["set", "users", #"{"a": {"score": 1}, "b": {"score": 3}, "c": {"score": 2}}"#] + db)
        let observer = try RunningTool(
            ["observe", "users", "--order-by-child", "score", "--limit-to-last", "2", "--events", "child_added,value"] + db)
        let lines = try observer.waitForLines(3)
        #expect(
            lines == [
                #"{"event":"child_added","key":"c","previous":null,"value":{"score":2}}"#,
                #"{"event":"child_added","key":"b","previous":"c","value":{"score":3}}"#,
                #"{"event":"value","key":"users","value":{"b":{"score":3},"c":{"score":2}}}"#,
            ])
        #expect(try observer.stop(SIGINT) == 0, "\(observer.errorOutput)")
        #expect(observer.errorOutput.isEmpty)
    }

    @Test func textFormat() throws {
        let dir = TemporaryDirectory()
        _ = try canopy(["set", "l", #"{"x": 1, "y": 2}"#, "--db", dir.file("db")])
        let observer = try RunningTool(["observe", "l", "--format", "text", "--db", dir.file("db")])
        let lines = try observer.waitForLines(2)
        #expect(lines == ["child_added   x (first)  1", "child_added   y (after x)  2"])
        #expect(try observer.stop(SIGTERM) == 0)
    }

    /// The scripted sequence, live: writes by other processes through the server, child events
    /// (including child_moved under an ordered limited query) derived by the observer.
    @Test func followsAServer() throws {
        let dir = TemporaryDirectory()
        let (server, url) = try startServer(dir.file("served"))
        defer { _ = try? server.stop(SIGTERM) }
        func write(_ arguments: [String]) throws { try canopySucceeds(arguments + ["--url", url]) }
        try write(["set", "users", #"{"a": {"score": 1}, "b": {"score": 2}, "c": {"score": 3}}"#])
        let observer = try RunningTool([
            "observe", "users", "--order-by-child", "score", "--limit-to-last", "2",
            "--events", "child_added,child_changed,child_removed,child_moved", "--url", url,
        ])
        var expected = [
            #"{"event":"child_added","key":"b","previous":null,"value":{"score":2}}"#,
            #"{"event":"child_added","key":"c","previous":"b","value":{"score":3}}"#,
        ]
        #expect(try observer.waitForLines(expected.count) == expected)

        // a jumps to the top: b leaves the window.
        try write(["set", "users/a/score", "5"])
        expected += [
            #"{"event":"child_removed","key":"b","value":{"score":2}}"#,
            #"{"event":"child_added","key":"a","previous":"c","value":{"score":5}}"#,
        ]
        #expect(try observer.waitForLines(expected.count) == expected)

        // c overtakes a: it moves (and changes).
        try write(["update", "users/c", #"{"score": 10}"#])
        expected += [
            #"{"event":"child_moved","key":"c","previous":"a","value":{"score":10}}"#,
            #"{"event":"child_changed","key":"c","previous":"a","value":{"score":10}}"#,
        ]
        #expect(try observer.waitForLines(expected.count) == expected)

        // c goes: b comes back into the window.
        try write(["remove", "users/c"])
        expected += [
            #"{"event":"child_removed","key":"c","value":{"score":10}}"#,
            #"{"event":"child_added","key":"b","previous":null,"value":{"score":2}}"#,
        ]
        #expect(try observer.waitForLines(expected.count) == expected)

        // A push from another process.
        let pushed = try canopy(["push", "users", #"{"score": 3}"#, "--url", url])
        #expect(pushed.status == 0, "\(pushed)")
        expected += [
            #"{"event":"child_removed","key":"b","value":{"score":2}}"#,
            #"{"event":"child_added","key":"\#(pushed.output)","previous":null,"value":{"score":3}}"#,
        ]
        #expect(try observer.waitForLines(expected.count) == expected)

        #expect(try observer.stop(SIGINT) == 0, "\(observer.errorOutput)")
        #expect(observer.output == expected)

        // The data commands over the server agree.
        var r = try canopy(["get", "users", "--order-by-child", "score", "--url", url])
        #expect(r.output == #"{"b":{"score":2},"\#(pushed.output)":{"score":3},"a":{"score":5}}"#, "\(r)")
        r = try canopy(["get", "users", "--shallow", "--url", url])
        #expect(r.output == #"{"\#(pushed.output)":true,"a":true,"b":true}"#, "\(r)")
        r = try canopy(["export", "users/a", "--url", url])
        #expect(r.output == #"{"score":5}"#, "\(r)")
        #expect(try server.stop(SIGTERM) == 0)
    }

    /// `canopy serve --db DIR` serves what the data commands wrote with `--db DIR` (namespace
    /// `default`, others with `--namespace`).
    @Test func servesTheDataCommandsDirectory() throws {
        let dir = TemporaryDirectory()
        var r = try canopy(["set", "a", "1", "--db", dir.file("data")])
        #expect(r.status == 0, "\(r)")
        r = try canopy(["set", "b", "2", "--db", dir.file("data"), "--namespace", "other"])
        #expect(r.status == 0, "\(r)")
        let (server, url) = try startServer(dir.file("data"))
        r = try canopy(["get", "/", "--url", url])
        #expect(r.output == #"{"a":1}"#, "\(r)")
        r = try canopy(["get", "/", "--url", url, "--namespace", "other"])
        #expect(r.output == #"{"b":2}"#, "\(r)")
        r = try canopy(["get", "/", "--url", url + "?ns=other"])
        #expect(r.output == #"{"b":2}"#, "\(r)")
        r = try canopy(["get", "/", "--db", dir.file("data")])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("in use"), "\(r)")
        #expect(try server.stop(SIGTERM) == 0)
    }

    @Test func serverGoingAwayEndsObserve() throws {
        let dir = TemporaryDirectory()
        let (server, url) = try startServer(dir.file("served"))
        let set = try canopy(["set", "k", "1", "--url", url])
        #expect(set.status == 0, "\(set)")
        let observer = try RunningTool(["observe", "/", "--events", "value", "--url", url])
        #expect(try observer.waitForLines(1) == [#"{"event":"value","key":null,"value":{"k":1}}"#])
        #expect(try server.stop(SIGTERM) == 0)
        let status = try observer.stop(0)
        #expect(status == 69, "\(observer.errorOutput)")
        #expect(observer.errorOutput.hasPrefix("canopy: "), "\(observer.errorOutput)")
    }
}
