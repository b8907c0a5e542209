import CanopyTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The command line's REST and event-stream client follows `307 Temporary Redirect` to its
/// `Location` (as the Firebase REST API asks of its clients): every method, with its body, and
/// event streams.
@Suite(.serialized)
struct RedirectTests {
    @Test("set, update, push, remove, get, rules and observe through a server that answers 307 to every request")
    func followsRedirects() throws {
        let dir = TemporaryDirectory()
        let (server, url) = try startServer(dir.file("served"))
        defer { _ = try? server.stop(SIGTERM) }
        let redirector = try RedirectServer { target in url + target }
        defer { redirector.stop() }
        let via = ["--url", "http://127.0.0.1:\(redirector.port)"]

        try canopySucceeds(["set", "items", #"{"a": 1}"#] + via)
        try canopySucceeds(["update", "items", #"{"b": 2}"#] + via)
        let pushed = try canopy(["push", "items", #""c""#] + via)
        #expect(pushed.status == 0, "\(pushed)")
        try canopySucceeds(["remove", "items/a"] + via)
        let read = try canopy(["get", "items"] + via)
        #expect(read.output == #"{"\#(pushed.output)":"c","b":2}"#, "\(read)")
        // The emulator's `owner` is the administrator of a server without credentials.
        try canopySucceeds(["rules", "get", "--auth-token", "owner"] + via)

        let observer = try RunningTool(["observe", "items", "--events", "value"] + via)
        #expect(try observer.waitForLines(1) == [#"{"event":"value","key":"items","value":{"\#(pushed.output)":"c","b":2}}"#])
        try canopySucceeds(["set", "items/b", "3"] + via)
        #expect(try observer.waitForLines(2).last == #"{"event":"value","key":"items","value":{"\#(pushed.output)":"c","b":3}}"#)
        #expect(try observer.stop(SIGINT) == 0, "\(observer.errorOutput)")

        // Each request reached the redirector once, with its method and body; the real server did the rest.
        let requests = redirector.requests
        #expect(requests.map(\.method) == ["PUT", "PATCH", "POST", "DELETE", "GET", "GET", "GET", "PUT"])
        #expect(requests.map(\.body) == [#"{"a": 1}"#, #"{"b": 2}"#, #""c""#, "", "", "", "", "3"])
        #expect(requests[6].accept == "text/event-stream", "the stream was redirected")
        #expect(requests[5].authorization == "Bearer owner", "rules get carries its token")
    }

    @Test("a redirect loop, an https Location or a 307 without one fails with a clear message")
    func badRedirects() throws {
        let loop = try RedirectServer { target in target }
        defer { loop.stop() }
        let looped = try canopy(["get", "x", "--url", "http://127.0.0.1:\(loop.port)"])
        #expect(looped.status != 0 && looped.stderr.contains("redirected more than 10 times"), "\(looped)")
        #expect(loop.requests.count == 11)

        let secure = try RedirectServer { target in "https://example.com" + target }
        defer { secure.stop() }
        let refused = try canopy(["get", "x", "--url", "http://127.0.0.1:\(secure.port)"])
        #expect(refused.status != 0 && refused.stderr.contains("plain http:// only"), "\(refused)")

        let nowhere = try RedirectServer { _ in "" }
        defer { nowhere.stop() }
        let lost = try canopy(["observe", "x", "--url", "http://127.0.0.1:\(nowhere.port)"])
        #expect(lost.status != 0 && lost.stderr.contains("without a Location"), "\(lost)")
    }
}
