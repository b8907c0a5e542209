import Canopy
import CanopyCore
import CanopyServer
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

extension HTTPField.Name {
    static let firebaseETag = HTTPField.Name("X-Firebase-ETag")!
    static let methodOverride = HTTPField.Name("X-HTTP-Method-Override")!
}

/// Every REST endpoint, parameter, status and error body, in process and over loopback.
@Suite("REST API")
struct RESTTests {
    static let setups: [TestingSetup] = [.router, .live]

    @Test("PUT, GET, PATCH, POST and DELETE on a location and on the root", arguments: setups)
    func crud(_ setup: TestingSetup) async throws {
        try await withTestServer(setup) { client in
            try await client.execute(uri: "/users/ada.json", method: .put, body: body(#"{"name": "Ada", "born": 1815}"#)) {
                (r: TestResponse) throws in
                #expect(r.status == .ok)
                #expect(r.headers[.contentType] == "application/json; charset=utf-8")
                #expect(try json(r.body) == ["name": "Ada", "born": 1815])
            }
            try await client.execute(uri: "/users/ada.json", method: .get) { (r: TestResponse) throws in
                #expect(r.status == .ok)
                #expect(try json(r.body) == ["name": "Ada", "born": 1815])
            }
            try await client.execute(uri: "/users/ada/.json", method: .get) { (r: TestResponse) throws in
                #expect(try json(r.body) == ["name": "Ada", "born": 1815])
            }
            try await client.execute(uri: "/users/ada.json", method: .patch, body: body(#"{"born": null, "langs/first": "Analytical"}"#)) {
                (r: TestResponse) throws in
                #expect(r.status == .ok)
                #expect(try json(r.body) == ["born": .null, "langs/first": "Analytical"])
            }
            try await client.execute(uri: "/.json", method: .get) { (r: TestResponse) throws in
                #expect(try json(r.body) == ["users": ["ada": ["name": "Ada", "langs": ["first": "Analytical"]]]])
            }
            let name = try await client.execute(uri: "/posts.json", method: .post, body: body(#"{"title": "Hi"}"#)) {
                (r: TestResponse) throws in
                #expect(r.status == .ok)
                guard case .object(let o) = try json(r.body), case .string(let name)? = o["name"] else { throw TestFailure("no name") }
                return name
            }
            #expect(name.utf8.count == 20)
            try await client.execute(uri: "/posts/\(name)/title.json", method: .get) { (r: TestResponse) throws in
                #expect(try json(r.body) == "Hi")
            }
            try await client.execute(uri: "/users/ada.json", method: .delete) { (r: TestResponse) throws in
                #expect(r.status == .ok)
                #expect(String(buffer: r.body) == "null")
            }
            try await client.execute(uri: "/users.json", method: .get) { (r: TestResponse) throws in
                #expect(String(buffer: r.body) == "null")
            }
            // A PATCH with a null body removes the location (firebase-tools deletes that way).
            try await client.execute(uri: "/posts.json", method: .patch, body: body("null")) { (r: TestResponse) throws in
                #expect(r.status == .ok)
            }
            try await client.execute(uri: "/.json", method: .get) { (r: TestResponse) throws in #expect(String(buffer: r.body) == "null") }
        }
    }

    @Test("push ids increase, and push() with no value writes an empty string", arguments: setups)
    func pushIDs(_ setup: TestingSetup) async throws {
        try await withTestServer(setup) { client in
            var names: [String] = []
            for i in 0..<20 {
                try await client.execute(uri: "/list.json?ns=p", method: .post, body: body(i == 0 ? #""""# : "\(i)")) {
                    (r: TestResponse) throws in
                    guard case .object(let o) = try json(r.body), case .string(let name)? = o["name"] else { throw TestFailure("no name") }
                    names.append(name)
                }
            }
            #expect(names == names.sorted())
            #expect(Set(names).count == 20)
            try await client.execute(uri: "/list/\(names[0]).json?ns=p", method: .get) { (r: TestResponse) throws in
                #expect(try json(r.body) == "")
            }
        }
    }

    @Test("print=silent answers 204 with no body, print=pretty indents", arguments: setups)
    func printModes(_ setup: TestingSetup) async throws {
        try await withTestServer(setup) { client in
            for method in [HTTPRequest.Method.put, .patch, .post] {
                try await client.execute(uri: "/a.json?print=silent", method: method, body: body(#"{"b": 1}"#)) {
                    (r: TestResponse) throws in
                    #expect(r.status == .noContent)
                    #expect(r.body.readableBytes == 0)
                }
            }
            try await client.execute(uri: "/x.json?print=silent", method: .delete) { (r: TestResponse) throws in
                #expect(r.status == .noContent)
            }
            try await client.execute(uri: "/a.json?print=silent", method: .get) { (r: TestResponse) throws in
                #expect(r.status == .noContent)
            }
            try await client.execute(uri: "/c.json", method: .put, body: body(#"{"k": {"v": 1}}"#)) { _ in }
            try await client.execute(uri: "/c.json?print=pretty", method: .get) { (r: TestResponse) throws in
                #expect(String(buffer: r.body) == "{\n  \"k\": {\n    \"v\": 1\n  }\n}")
            }
            try await client.execute(uri: "/c.json?print=loud", method: .get) { (r: TestResponse) throws in
                #expect(r.status == .badRequest)
                #expect(String(buffer: r.body).contains("print"))
            }
        }
    }

    @Test("shallow=true truncates children to true; format=export shows priorities", arguments: setups)
    func shallowAndExport(_ setup: TestingSetup) async throws {
        try await withTestServer(setup) { client in
            try await client.execute(
                uri: "/u.json", method: .put,
                body: body(#"{"a": {"x": 1}, "b": 2, ".priority": 5, "c": {".value": "v", ".priority": "p"}}"#)
            ) { (r: TestResponse) throws in
                #expect(r.status == .ok)
            }
            try await client.execute(uri: "/u.json?shallow=true", method: .get) { (r: TestResponse) throws in
                #expect(try json(r.body) == ["a": true, "b": true, "c": true])
            }
            try await client.execute(uri: "/u/b.json?shallow=true", method: .get) { (r: TestResponse) throws in
                #expect(try json(r.body) == 2)
            }
            try await client.execute(uri: "/u.json?shallow=true&limitToFirst=1&startAfter=%22a%22", method: .get) {
                (r: TestResponse) throws in
                #expect(try json(r.body) == ["b": true])
            }
            try await client.execute(uri: "/u.json?format=export", method: .get) { (r: TestResponse) throws in
                #expect(try json(r.body) == ["a": ["x": 1], "b": 2, ".priority": 5, "c": [".value": "v", ".priority": "p"]])
            }
            try await client.execute(uri: "/u.json", method: .get) { (r: TestResponse) throws in
                #expect(try json(r.body) == ["a": ["x": 1], "b": 2, "c": "v"])
            }
            try await client.execute(uri: "/u/.priority.json", method: .get) { (r: TestResponse) throws in #expect(try json(r.body) == 5) }
            try await client.execute(uri: "/u/a/.priority.json", method: .put, body: body("3")) { (r: TestResponse) throws in
                #expect(try json(r.body) == 3)
            }
            try await client.execute(uri: "/u/a.json?format=export", method: .get) { (r: TestResponse) throws in
                #expect(try json(r.body) == ["x": 1, ".priority": 3])
            }
            try await client.execute(uri: "/u.json?shallow=true&orderBy=%22$value%22", method: .get) { (r: TestResponse) throws in
                #expect(r.status == .badRequest)
            }
            try await client.execute(uri: "/u.json?shallow=maybe", method: .get) { (r: TestResponse) throws in
                #expect(r.status == .badRequest)
            }
        }
    }

    @Test("orderBy with limits and bounds selects the right children", arguments: setups)
    func queries(_ setup: TestingSetup) async throws {
        try await withTestServer(setup) { client in
            let scores =
                #"{"a": {"s": 3, "m": {"r": 9}}, "b": {"s": 1, "m": {"r": 2}}, "c": {"s": 2}, "d": {"s": "x"}, "e": {"t": 1}, "f": {"s": 3}}"#
            try await client.execute(uri: "/p.json", method: .put, body: body(scores)) { _ in }
            func keys(_ query: String) async throws -> [String] {
                try await client.execute(uri: "/p.json?\(query)", method: .get) { (r: TestResponse) throws in
                    #expect(r.status == .ok, "\(query): \(String(buffer: r.body))")
                    guard case .object(let o) = try json(r.body) else { return [] }
                    return o.keys.sorted()
                }
            }
            #expect(try await keys("orderBy=%22s%22&limitToLast=2") == ["d", "f"])
            #expect(try await keys("orderBy=%22s%22&limitToFirst=2") == ["b", "e"])
            #expect(try await keys("orderBy=%22s%22&startAt=2&endAt=3") == ["a", "c", "f"])
            #expect(try await keys("orderBy=%22s%22&startAfter=2&endBefore=%22x%22") == ["a", "f"])
            #expect(try await keys("orderBy=%22s%22&equalTo=3") == ["a", "f"])
            #expect(try await keys("orderBy=%22m/r%22&startAt=2&endAt=5") == ["b"])
            #expect(try await keys("orderBy=%22$key%22&startAt=%22b%22&endAt=%22d%22&limitToFirst=2") == ["b", "c"])
            #expect(try await keys("orderBy=%22$priority%22&limitToFirst=1") == ["a"])
            try await client.execute(uri: "/v.json", method: .put, body: body(#"{"x": 5, "y": 1, "z": "s", "w": true}"#)) { _ in }
            try await client.execute(uri: "/v.json?orderBy=%22$value%22&limitToFirst=2", method: .get) { (r: TestResponse) throws in
                #expect(try json(r.body) == ["w": true, "y": 1])
            }
            try await client.execute(uri: "/v.json?orderBy=%22$value%22&startAt=2", method: .get) { (r: TestResponse) throws in
                #expect(try json(r.body) == ["x": 5, "z": "s"])
            }
            // A `+` in a value is a plus, not a space.
            try await client.execute(uri: "/w.json", method: .put, body: body(#"{"k1": "a+b", "k2": "a b"}"#)) { _ in }
            try await client.execute(uri: "/w.json?orderBy=%22$value%22&equalTo=%22a+b%22", method: .get) { (r: TestResponse) throws in
                #expect(try json(r.body) == ["k1": "a+b"])
            }
        }
    }

    @Test("bad queries are 400 with a message naming the problem", arguments: setups)
    func badQueries(_ setup: TestingSetup) async throws {
        try await withTestServer(setup) { client in
            let cases: [(String, String)] = [
                ("limitToFirst=2", "orderBy must be defined"),
                ("orderBy=score", "orderBy must be a valid JSON encoded path"),
                ("orderBy=%22s%22&limitToFirst=x", "limitToFirst"),
                ("orderBy=%22s%22&limitToFirst=-1", "limitToFirst"),
                ("orderBy=%22s%22&limitToFirst=1&limitToLast=1", "limit"),
                ("orderBy=%22s%22&startAt=%7Bbad", "startAt"),
                ("orderBy=%22$key%22&startAt=1", "queryOrderedByKey"),
                ("orderBy=%22s%22&startAt=%7B%7D", "NSString"),
                ("orderBy=%22a.b%22", "queryOrderedByChild"),
                ("orderBy=%22s%22&equalTo=1&startAt=1", "queryEqualToValue"),
            ]
            for (query, message) in cases {
                try await client.execute(uri: "/p.json?\(query)", method: .get) { (r: TestResponse) throws in
                    #expect(r.status == .badRequest, "\(query)")
                    guard case .object(let o) = try json(r.body), case .string(let error)? = o["error"] else {
                        Issue.record("\(query): no error body: \(String(buffer: r.body))")
                        return
                    }
                    #expect(error.contains(message), "\(query): \(error)")
                }
            }
            try await client.execute(uri: "/p.json?orderBy=%22s%22", method: .put, body: body("1")) { (r: TestResponse) throws in
                #expect(r.status == .badRequest)
            }
        }
    }

    @Test("server values resolve to the time and to atomic increments", arguments: setups)
    func serverValues(_ setup: TestingSetup) async throws {
        try await withTestServer(setup) { client in
            let before = Int64(Date().timeIntervalSince1970 * 1000)
            try await client.execute(uri: "/t.json", method: .put, body: body(#"{"at": {".sv": "timestamp"}, "n": 5}"#)) {
                (r: TestResponse) throws in
                guard case .object(let o) = try json(r.body), case .int(let at)? = o["at"] else {
                    throw TestFailure("no time: \(String(buffer: r.body))")
                }
                let after = Int64(Date().timeIntervalSince1970 * 1000)
                #expect(at >= before && at <= after)
            }
            try await client.execute(uri: "/t/n.json", method: .put, body: body(#"{".sv": {"increment": 2}}"#)) {
                (r: TestResponse) throws in #expect(try json(r.body) == 7)
            }
            try await client.execute(
                uri: "/t.json", method: .patch, body: body(#"{"n": {".sv": {"increment": 0.5}}, "m": {".sv": {"increment": 3}}}"#)
            ) { (r: TestResponse) throws in
                #expect(try json(r.body) == ["n": 7.5, "m": 3])
            }
            try await client.execute(uri: "/t/n.json", method: .put, body: body(#"{".sv": "tomorrow"}"#)) { (r: TestResponse) throws in
                #expect(r.status == .badRequest)
                #expect(String(buffer: r.body).contains("server value"))
            }
            try await client.execute(uri: "/t/n.json", method: .get) { (r: TestResponse) throws in #expect(try json(r.body) == 7.5) }
        }
    }

    @Test("ETags: X-Firebase-ETag, if-match (412 with the current value and ETag), null_etag, if-none-match (304)", arguments: setups)
    func etags(_ setup: TestingSetup) async throws {
        try await withTestServer(setup) { client in
            let wantETag: HTTPFields = [.firebaseETag: "true"]
            try await client.execute(uri: "/c.json", method: .get, headers: wantETag) { (r: TestResponse) throws in
                #expect(r.headers[.eTag] == "null_etag")
                #expect(String(buffer: r.body) == "null")
            }
            // Create-if-absent with null_etag.
            try await client.execute(uri: "/c.json", method: .put, headers: [.ifMatch: "null_etag"], body: body("1")) {
                (r: TestResponse) throws in
                #expect(r.status == .ok)
                #expect(try json(r.body) == 1)
            }
            try await client.execute(uri: "/c.json", method: .put, headers: [.ifMatch: "null_etag"], body: body("5")) {
                (r: TestResponse) throws in
                #expect(r.status == .preconditionFailed)
                #expect(try json(r.body) == 1)
                #expect(r.headers[.eTag] != nil)
                #expect(r.headers[.eTag] != "null_etag")
            }
            let etag1 = try await client.execute(uri: "/c.json", method: .get, headers: wantETag) { (r: TestResponse) throws in
                r.headers[.eTag] ?? ""
            }
            #expect(!etag1.isEmpty && !etag1.contains("\""))
            try await client.execute(uri: "/c.json", method: .get, headers: wantETag) { (r: TestResponse) throws in
                #expect(r.headers[.eTag] == etag1)
            }
            try await client.execute(uri: "/c.json", method: .get, headers: [.ifNoneMatch: etag1]) { (r: TestResponse) throws in
                #expect(r.status == .notModified)
                #expect(r.body.readableBytes == 0)
            }
            try await client.execute(uri: "/c.json", method: .put, headers: [.ifMatch: etag1], body: body("2")) {
                (r: TestResponse) throws in #expect(r.status == .ok)
            }
            // The old ETag no longer matches: 412 carries the current value and its ETag.
            let (etag2, current) = try await client.execute(uri: "/c.json", method: .put, headers: [.ifMatch: etag1], body: body("3")) {
                (r: TestResponse) throws in
                #expect(r.status == .preconditionFailed)
                return (r.headers[.eTag] ?? "", try json(r.body))
            }
            #expect(current == 2)
            try await client.execute(uri: "/c.json", method: .get, headers: [.ifNoneMatch: etag1]) { (r: TestResponse) throws in
                #expect(r.status == .ok)
                #expect(r.headers[.eTag] == etag2)
                #expect(try json(r.body) == 2)
            }
            try await client.execute(uri: "/c.json", method: .put, headers: [.ifMatch: etag2, .firebaseETag: "true"], body: body("3")) {
                (r: TestResponse) throws in
                #expect(r.status == .ok)
                #expect(r.headers[.eTag] != nil && r.headers[.eTag] != etag2)
            }
            // DELETE with if-match; a write above the location changes its ETag.
            let etag3 = try await client.execute(uri: "/c.json", method: .get, headers: wantETag) { (r: TestResponse) throws in
                r.headers[.eTag] ?? ""
            }
            try await client.execute(uri: "/.json", method: .patch, body: body(#"{"c": 4}"#)) { _ in }
            try await client.execute(uri: "/c.json", method: .delete, headers: [.ifMatch: etag3]) { (r: TestResponse) throws in
                #expect(r.status == .preconditionFailed)
                #expect(try json(r.body) == 4)
            }
            try await client.execute(uri: "/c.json", method: .get) { (r: TestResponse) throws in #expect(try json(r.body) == 4) }
            // if-match is not for GET, PATCH or POST.
            try await client.execute(uri: "/c.json", method: .get, headers: [.ifMatch: etag3]) { (r: TestResponse) throws in
                #expect(r.status == .badRequest)
            }
            try await client.execute(uri: "/c.json", method: .patch, headers: [.ifMatch: etag3], body: body("{}")) {
                (r: TestResponse) throws in #expect(r.status == .badRequest)
            }
            // POST with X-Firebase-ETag gets the ETag of the posted data.
            try await client.execute(uri: "/d.json", method: .post, headers: wantETag, body: body("7")) { (r: TestResponse) throws in
                #expect(r.headers[.eTag] != nil)
            }
        }
    }

    @Test("X-HTTP-Method-Override and x-http-method-override turn a POST into another method", arguments: setups)
    func methodOverride(_ setup: TestingSetup) async throws {
        try await withTestServer(setup) { client in
            try await client.execute(uri: "/m.json", method: .post, headers: [.methodOverride: "PUT"], body: body(#"{"a": 1}"#)) {
                (r: TestResponse) throws in
                #expect(try json(r.body) == ["a": 1])
            }
            try await client.execute(uri: "/m.json?x-http-method-override=PATCH", method: .post, body: body(#"{"b": 2}"#)) { _ in }
            try await client.execute(uri: "/m.json", method: .get) { (r: TestResponse) throws in
                #expect(try json(r.body) == ["a": 1, "b": 2])
            }
            try await client.execute(uri: "/m.json", method: .post, headers: [.methodOverride: "DELETE"]) { _ in }
            try await client.execute(uri: "/m.json", method: .get) { (r: TestResponse) throws in #expect(String(buffer: r.body) == "null") }
            try await client.execute(uri: "/m.json", method: .post, headers: [.methodOverride: "TRACE"]) { (r: TestResponse) throws in
                #expect(r.status == .badRequest)
            }
        }
    }

    @Test("the rules endpoint keeps the document as given; a bad one is 400 naming where, and changes nothing", arguments: setups)
    func rules(_ setup: TestingSetup) async throws {
        try await withTestServer(setup) { client in
            try await client.execute(uri: "/.settings/rules.json", method: .get) { (r: TestResponse) throws in
                #expect(r.status == .ok)
                #expect(try json(r.body) == ["rules": [".read": true, ".write": true]])
            }
            let rules = "{\n  // comment\n  \"rules\": {\"posts\": {\".indexOn\": [\"score\"]}} /* more */\n}"
            try await client.execute(uri: "/.settings/rules.json?ns=r", method: .put, body: body(rules)) { (r: TestResponse) throws in
                #expect(r.status == .ok)
            }
            try await client.execute(uri: "/.settings/rules.json?ns=r", method: .get) { (r: TestResponse) throws in
                #expect(String(buffer: r.body) == rules)
            }
            let bad: [(document: String, message: String)] = [
                (#"{"rulez": {}}"#, "line 1, column 2: Expected 'rules' property."),
                (#"{"rules": "#, "line 1"),
                (
                    "{\n  \"rules\": {\n    \".read\": \"auth.uid ==\"\n  }\n}",
                    "line 3, column 26: The expression ends too early in .read at /: auth.uid =="
                ),
            ]
            for (document, message) in bad {
                try await client.execute(uri: "/.settings/rules.json?ns=r", method: .put, body: body(document)) {
                    (r: TestResponse) throws in
                    #expect(r.status == .badRequest)
                    guard case .object(let o) = try json(r.body), case .string(let error)? = o["error"] else {
                        Issue.record("no error body: \(String(buffer: r.body))")
                        return
                    }
                    #expect(error.contains(message), "\(error)")
                }
            }
            try await client.execute(uri: "/.settings/rules.json?ns=r", method: .get) { (r: TestResponse) throws in
                #expect(String(buffer: r.body) == rules)
            }
            try await client.execute(uri: "/.settings/rules.json?ns=r", method: .delete) { (r: TestResponse) throws in
                #expect(r.status == .methodNotAllowed)
            }
        }
    }

    @Test("namespaces are separate databases; requests without ns use the default one", arguments: setups)
    func namespaces(_ setup: TestingSetup) async throws {
        try await withTestServer(setup) { client in
            try await client.execute(uri: "/k.json?ns=one", method: .put, body: body("1")) { _ in }
            try await client.execute(uri: "/k.json?ns=two", method: .put, body: body("2")) { _ in }
            try await client.execute(uri: "/k.json", method: .put, body: body("0")) { _ in }
            try await client.execute(uri: "/k.json?ns=one", method: .get) { (r: TestResponse) throws in #expect(try json(r.body) == 1) }
            try await client.execute(uri: "/k.json?ns=two", method: .get) { (r: TestResponse) throws in #expect(try json(r.body) == 2) }
            try await client.execute(uri: "/k.json?ns=default", method: .get) { (r: TestResponse) throws in #expect(try json(r.body) == 0) }
            try await client.execute(uri: "/k.json?ns=bad%20name", method: .get) { (r: TestResponse) throws in
                #expect(r.status == .badRequest)
                #expect(String(buffer: r.body).contains("namespace"))
            }
        }
    }

    @Test("bad paths, bad JSON, bad values and too-large bodies are 4xx with an error body, and write nothing", arguments: setups)
    func errors(_ setup: TestingSetup) async throws {
        try await withTestServer(setup, { $0.maxBodyBytes = 1_000 }) { client in
            try await client.execute(uri: "/keep.json", method: .put, body: body(#"{"v": 1}"#)) { _ in }
            let cases: [(String, HTTPRequest.Method, String?, HTTPResponse.Status, String)] = [
                ("/a$b.json", .get, nil, .badRequest, "Invalid path"),
                ("/a[b.json", .put, "1", .badRequest, "Invalid path"),
                ("/a%2Eb.json", .put, "1", .badRequest, "Invalid path"),
                ("/a%ZZ.json", .get, nil, .badRequest, "percent"),
                ("/a%FF.json", .get, nil, .badRequest, "UTF-8"),
                ("/keep", .get, nil, .badRequest, ".json"),
                ("/keep.json", .put, "{bad", .badRequest, "couldn't parse JSON"),
                ("/keep.json", .put, "", .badRequest, "couldn't parse JSON"),
                ("/keep.json", .put, #"{"v": 1} trailing"#, .badRequest, "couldn't parse JSON"),
                ("/keep.json", .put, #"{"a.b": 1}"#, .badRequest, "a.b"),
                ("/keep.json", .put, #"{"v": 1, ".sv": "timestamp"}"#, .badRequest, ".sv"),
                ("/keep.json", .patch, "[1, 2]", .badRequest, "JSON object"),
                ("/keep.json", .patch, #"{"a": 1, "a/b": 2}"#, .badRequest, "ancestor"),
                ("/keep.json", .patch, #"{"a#": 1}"#, .badRequest, "invalid key"),
                ("/keep.json", .post, "nope", .badRequest, "couldn't parse JSON"),
                ("/keep.json", .put, "[" + String(repeating: "1,", count: 600) + "1]", .contentTooLarge, "too large"),
                ("/" + Array(repeating: "d", count: 40).joined(separator: "/") + ".json", .get, nil, .badRequest, "deeper"),
                ("/.info/x.json", .put, "1", .badRequest, ".info"),
                ("/keep.json", .head, nil, .methodNotAllowed, ""),
            ]
            for (uri, method, text, status, message) in cases {
                try await client.execute(uri: uri, method: method, body: text.map(body)) { (r: TestResponse) throws in
                    #expect(r.status == status, "\(method) \(uri)")
                    if method != .head {
                        guard case .object(let o) = try json(r.body), case .string(let error)? = o["error"] else {
                            Issue.record("\(method) \(uri): no error body: \(String(buffer: r.body))")
                            return
                        }
                        #expect(error.contains(message), "\(method) \(uri): \(error)")
                    }
                }
            }
            try await client.execute(uri: "/.json", method: .get) { (r: TestResponse) throws in
                #expect(try json(r.body) == ["keep": ["v": 1]])
            }
        }
    }

    @Test("with an auth token, requests need it (header or auth=); Bearer owner is not enough", arguments: setups)
    func auth(_ setup: TestingSetup) async throws {
        try await withTestServer(setup, { $0.authToken = "s3cret" }) { client in
            // Without a credential the server's locked rules refuse; a credential that proves nothing
            // is refused as such.
            let refusals: [(HTTPFields, String)] = [
                ([:], "Permission denied"), ([.authorization: "Bearer owner"], "The auth token is not valid."),
                ([.authorization: "Bearer wrong"], "The auth token is not valid."),
            ]
            for (headers, message) in refusals {
                try await client.execute(uri: "/a.json", method: .put, headers: headers, body: body("1")) { (r: TestResponse) throws in
                    #expect(r.status == .unauthorized)
                    #expect(try json(r.body) == ["error": .string(message)])
                }
            }
            try await client.execute(uri: "/a.json", method: .put, headers: [.authorization: "Bearer s3cret"], body: body("1")) {
                (r: TestResponse) throws in #expect(r.status == .ok)
            }
            try await client.execute(uri: "/a.json?auth=s3cret", method: .get) { (r: TestResponse) throws in #expect(try json(r.body) == 1)
            }
            try await client.execute(uri: "/a.json?auth=nope", method: .get) { (r: TestResponse) throws in
                #expect(r.status == .unauthorized)
            }
        }
        // Without a token, firebase-admin's `Bearer owner` is an admin.
        try await withTestServer(setup) { client in
            try await client.execute(uri: "/a.json", method: .put, headers: [.authorization: "Bearer owner"], body: body("1")) {
                (r: TestResponse) throws in #expect(r.status == .ok)
            }
        }
    }
}

@Suite("Server configuration")
struct ConfigurationTests {
    @Test("without a token the server refuses a non-loopback address unless --insecure")
    func refusesOpenBind() throws {
        var configuration = ServerConfiguration()
        configuration.host = "0.0.0.0"
        #expect(throws: ServerError.self) { try configuration.validate() }
        configuration.allowInsecure = true
        try configuration.validate()
        configuration.allowInsecure = false
        configuration.authToken = "t"
        try configuration.validate()
        for host in ["127.0.0.1", "127.1.2.3", "localhost", "::1"] {
            var loopback = ServerConfiguration()
            loopback.host = host
            try loopback.validate()
        }
    }

    @Test("the slow-client timeout and the largest answer must be positive")
    func largeValueLimits() throws {
        var configuration = ServerConfiguration()
        #expect(configuration.slowClientTimeout == .seconds(30) && configuration.maxResponseBytes == 256 << 20)
        configuration.slowClientTimeout = .zero
        #expect(throws: ServerError.self) { try configuration.validate() }
        configuration = ServerConfiguration()
        configuration.maxResponseBytes = 0
        #expect(throws: ServerError.self) { try configuration.validate() }
    }

    @Test("run() refuses a non-loopback address without a token")
    func runRefuses() async throws {
        let server = makeServer { $0.host = "0.0.0.0" }
        await #expect(throws: ServerError.self) { try await server.run(handleSignals: false) }
    }
}
