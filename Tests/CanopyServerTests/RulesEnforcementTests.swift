import CanopyCore
import CanopyServer
import Foundation
import Testing

/// Security rules on the REST and event-stream ways in: what they allow happens, what they refuse
/// is 401 `Permission denied`, changes nothing and reaches no listener.
@Suite("Rules over REST and event streams")
struct RulesEnforcementTests {
    static let admin = [("Authorization", "Bearer s3cret")]

    /// Anyone may read `/public` and write numbers there; `/secret` is for the administrator; a
    /// `/log` entry must be a string.
    static let rules = """
        {
          "rules": {
            "public": {".read": true, ".write": "newData.isNumber() || !newData.exists()"},
            "log": {".read": true, "$entry": {".write": true, ".validate": "newData.isString()"}},
            "secret": {".read": false}
          }
        }
        """

    static func guardedServer(rules: String? = Self.rules) -> CanopyServer {
        makeServer {
            $0.authToken = "s3cret"
            $0.rules = rules
        }
    }

    @Test("reads: allowed, refused per location (rules are not filters), refused at the root")
    func reads() async throws {
        try await withLiveServer(Self.guardedServer()) { (port: Int) async throws in
            let seed = #"{"public": 1, "secret": {"k": "v"}, "log": {"a": "x"}}"#
            #expect(try await StreamTests.request(port, "PUT", "/.json", seed, headers: Self.admin).status == 200)
            #expect(try await StreamTests.request(port, "GET", "/public.json").body == "1")
            #expect(try await StreamTests.request(port, "GET", "/log/a.json").body == #""x""#)
            for target in ["/secret.json", "/secret/k.json", "/.json", "/secret/.priority.json", "/public.json?auth=nope"] {
                let reply = try await StreamTests.request(port, "GET", target)
                #expect(reply.status == 401, "\(target)")
                #expect(reply.body.contains("Permission denied") || reply.body.contains("auth token"), "\(target): \(reply.body)")
                #expect(!reply.body.contains("\"k\""), "\(target) leaks nothing: \(reply.body)")
            }
            // /.info is readable by anyone.
            #expect(try await StreamTests.request(port, "GET", "/.info/connected.json").status == 200)
        }
    }

    @Test("writes: a refused set, update, push, delete or priority changes nothing; a multi-path update is all or nothing")
    func writes() async throws {
        try await withLiveServer(Self.guardedServer()) { (port: Int) async throws in
            let seed = #"{"public": 1, "secret": {"k": "v"}, "log": {"a": "x"}}"#
            #expect(try await StreamTests.request(port, "PUT", "/.json", seed, headers: Self.admin).status == 200)
            #expect(try await StreamTests.request(port, "PUT", "/public.json", "2").status == 200)
            #expect(try await StreamTests.request(port, "POST", "/log.json", #""entry""#).status == 200)
            let refused: [(String, String, String?)] = [
                ("PUT", "/public.json", #""text""#), ("PUT", "/secret/k.json", "1"), ("DELETE", "/secret.json", nil),
                ("PATCH", "/.json", #"{"public": 3, "secret/k": "w"}"#), ("POST", "/log.json", "5"), ("PUT", "/log/b.json", #"{"x": 1}"#),
                ("PUT", "/secret/.priority.json", "1"), ("PUT", "/.json", "null"), ("PATCH", "/log.json", #"{"a": 1, "b": "y"}"#),
            ]
            for (method, target, body) in refused {
                let reply = try await StreamTests.request(port, method, target, body)
                #expect(reply.status == 401, "\(method) \(target): \(reply)")
                #expect(try json(reply.body) == ["error": "Permission denied"], "\(method) \(target)")
            }
            let after = try json(try await StreamTests.request(port, "GET", "/.json", headers: Self.admin).body)
            guard case .object(let root) = after, case .object(let log)? = root["log"] else { throw TestFailure("no log: \(after)") }
            #expect(root["public"] == 2)
            #expect(root["secret"] == ["k": "v"])
            #expect(log["a"] == "x")
            #expect(log.count == 2, "one push was allowed: \(log)")
            // A refused compare-and-set tells nothing of the data, not even that it changed.
            let stale = try await StreamTests.request(port, "PUT", "/secret/k.json", "1", headers: [("if-match", "nope")])
            #expect(stale.status == 401)
        }
    }

    @Test("a stream the rules refuse is 401; one that new rules take away gets cancel and ends; a refused write reaches no stream")
    func streams() async throws {
        try await withLiveServer(Self.guardedServer()) { (port: Int) async throws in
            #expect(try await StreamTests.request(port, "PUT", "/.json", #"{"public": 1, "secret": 2}"#, headers: Self.admin).status == 200)
            let refused = try await EventStreamClient.open(port: port, "/secret.json")
            #expect(refused.head.status == 401)
            await refused.connection.close()

            let stream = try await EventStreamClient.open(port: port, "/public.json")
            #expect(stream.head.status == 200)
            try await StreamTests.expectEvent(stream, "put", "/", 1)
            // Refused (not a number), then allowed: only the allowed write is an event.
            #expect(try await StreamTests.request(port, "PUT", "/public.json", #""x""#).status == 401)
            #expect(try await StreamTests.request(port, "PUT", "/public.json", "7").status == 200)
            try await StreamTests.expectEvent(stream, "put", "/", 7)

            let locked = #"{"rules": {"public": {".write": true}}}"#
            #expect(try await StreamTests.request(port, "PUT", "/.settings/rules.json", locked, headers: Self.admin).status == 200)
            let event = try await within(10, "cancel") { try await stream.nextData() }
            #expect(event?.name == "cancel")
            #expect(event?.data == #""Permission denied""#)
            let end = try await within(10, "end of stream") { try await stream.nextData() }
            #expect(end == nil, "the stream ends after cancel")
            #expect(try await StreamTests.request(port, "GET", "/public.json").status == 401)
        }
    }

    @Test("the rules endpoint is the administrator's on a guarded server; anyone's on a development server")
    func settingsAccess() async throws {
        try await withLiveServer(Self.guardedServer()) { (port: Int) async throws in
            #expect(try await StreamTests.request(port, "GET", "/.settings/rules.json").status == 401)
            #expect(try await StreamTests.request(port, "PUT", "/.settings/rules.json", #"{"rules": {".read": true}}"#).status == 401)
            #expect(try await StreamTests.request(port, "GET", "/.settings/rules.json", headers: Self.admin).body == Self.rules)
        }
        try await withLiveServer(makeServer()) { (port: Int) async throws in
            let open = try await StreamTests.request(port, "GET", "/.settings/rules.json")
            #expect(try json(open.body) == ["rules": [".read": true, ".write": true]])
            #expect(try await StreamTests.request(port, "PUT", "/a.json", "1").status == 200)
            // Rules set on a development server are enforced for requests without credentials...
            #expect(try await StreamTests.request(port, "PUT", "/.settings/rules.json", #"{"rules": {".read": true}}"#).status == 200)
            #expect(try await StreamTests.request(port, "PUT", "/a.json", "2").status == 401)
            // ...but not for the emulator's owner.
            #expect(try await StreamTests.request(port, "PUT", "/a.json", "3", headers: [("Authorization", "Bearer owner")]).status == 200)
            #expect(try await StreamTests.request(port, "GET", "/a.json").body == "3")
        }
    }

    @Test("a guarded server starts namespaces locked, and lets only its administrator create one")
    func lockedByDefault() async throws {
        try await withLiveServer(Self.guardedServer(rules: nil)) { (port: Int) async throws in
            #expect(try await StreamTests.request(port, "GET", "/.json?ns=fresh").status == 401)
            #expect(try await StreamTests.request(port, "PUT", "/a.json?ns=fresh", "1", headers: Self.admin).status == 200)
            // Open now, but locked: its rules grant nothing.
            #expect(try await StreamTests.request(port, "GET", "/a.json?ns=fresh").status == 401)
            let rules = try await StreamTests.request(port, "GET", "/.settings/rules.json?ns=fresh", headers: Self.admin)
            #expect(try json(rules.body) == ["rules": [".read": false, ".write": false]])
        }
    }

    @Test("a rules document that does not compile is refused at start-up, naming the line, column and expression")
    func badStartupRules() throws {
        var configuration = ServerConfiguration()
        configuration.rules = "{\n  \"rules\": {\n    \".write\": \"auth.uid === \"\n  }\n}"
        #expect(throws: ServerError.self) { try configuration.validate() }
        let problem = try #require(ServerConfiguration.rulesProblem(configuration.rules!))
        #expect(problem.contains("line 3, column 29"), "\(problem)")
        #expect(problem.contains("auth.uid ==="), "\(problem)")
    }
}
