import CanopyCore
import CanopyServer
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// `POST /.settings/rules/simulate.json`: reads and writes judged by the rules in force (or a
/// draft), as a user or signed out, against the current data; nothing written.
@Suite("Rules simulator")
struct RulesSimulationTests {
    static let rules = """
        {
          "rules": {
            "users": {
              ".read": true,
              "$uid": {
                ".write": "auth != null && auth.uid == $uid",
                "age": { ".validate": "newData.isNumber() && newData.val() >= data.val()" }
              }
            }
          }
        }
        """

    func simulate(_ client: some TestClientProtocol, _ request: String, auth: String = "") async throws -> (HTTPResponse.Status, JSONValue)
    {
        try await client.execute(uri: "/.settings/rules/simulate.json\(auth)", method: .post, body: body(request)) {
            (r: TestResponse) throws in (r.status, try json(String(buffer: r.body)))
        }
    }

    @Test("verdicts: the deciding rule with line and column, or none; data and server values taken into account")
    func verdicts() async throws {
        try await withTestServer(.router) { client in
            try await client.execute(uri: "/users/ada.json", method: .put, body: body(#"{"age": 36}"#)) { (r: TestResponse) throws in
                #expect(r.status == .ok)
            }
            try await client.execute(uri: "/.settings/rules.json", method: .put, body: body(Self.rules)) { (r: TestResponse) throws in
                #expect(r.status == .ok)
            }
            var (status, verdict) = try await self.simulate(client, #"{"operation": "read", "path": "/users/ada", "auth": null}"#)
            #expect(status == .ok)
            #expect(verdict["allowed"] == true)
            #expect(verdict["rule"] == ["rule": "/users/.read", "location": "/users", "expression": "true", "line": 4, "column": 16])
            (_, verdict) = try await self.simulate(client, #"{"operation": "read", "path": "/"}"#)
            #expect(verdict["allowed"] == false && verdict["rule"] == .null)
            // The write rule grants; .validate compares with the data stored (36).
            (_, verdict) = try await self.simulate(
                client, #"{"operation": "set", "path": "/users/ada/age", "data": 40, "auth": {"sub": "ada"}}"#)
            #expect(verdict["allowed"] == true)
            #expect(verdict["rule"]?["rule"] == "/users/$uid/.write")
            (_, verdict) = try await self.simulate(
                client, #"{"operation": "set", "path": "/users/ada/age", "data": 30, "auth": {"sub": "ada"}}"#)
            #expect(verdict["allowed"] == false)
            #expect(verdict["rule"]?["rule"] == "/users/$uid/age/.validate")
            #expect(verdict["rule"]?["line"] == 7)
            (_, verdict) = try await self.simulate(
                client, #"{"operation": "update", "path": "/users", "data": {"ada/age": 50}, "auth": {"sub": "bob"}}"#)
            #expect(verdict["allowed"] == false && verdict["rule"] == .null)
            // A server value is judged as what it becomes (now, in ms: more than 36).
            (_, verdict) = try await self.simulate(
                client, #"{"operation": "update", "path": "/users/ada", "data": {"age": {".sv": "timestamp"}}, "auth": {"sub": "ada"}}"#)
            #expect(verdict["allowed"] == true)
            // A draft document instead of the rules in force.
            (_, verdict) = try await self.simulate(
                client, #"{"operation": "read", "path": "/", "rules": "{\"rules\": {\".read\": true}}"}"#)
            #expect(verdict["allowed"] == true && verdict["rule"]?["rule"] == "/.read")
            // Nothing was written, the rules in force are unchanged.
            try await client.execute(uri: "/users.json", method: .get) { (r: TestResponse) throws in
                #expect(try json(String(buffer: r.body)) == ["ada": ["age": 36]])
            }
            try await client.execute(uri: "/.settings/rules.json", method: .get) { (r: TestResponse) throws in
                #expect(String(buffer: r.body) == Self.rules)
            }
        }
    }

    @Test("bad requests get 400 naming the field; only POST; only the administrator on a guarded server")
    func refusals() async throws {
        try await withTestServer(.router) { client in
            let cases: [(String, String)] = [
                ("[1]", "takes a JSON object"),
                (#"{"operation": "read"}"#, "path must be a location"),
                (#"{"operation": "delete", "path": "/"}"#, #"operation must be \"read\", \"set\" or \"update\""#),
                (#"{"operation": "read", "path": "/a.b"}"#, #"Invalid path \"/a.b\""#),
                (#"{"operation": "read", "path": "/", "auth": {"uid": "x"}}"#, "non-empty \\\"sub\\\""),
                (#"{"operation": "set", "path": "/a", "data": {"x.y": 1}}"#, "invalid key (x.y)"),
                (#"{"operation": "update", "path": "/a", "data": 3}"#, "data of an update must be an object"),
                (
                    #"{"operation": "read", "path": "/", "rules": "{\"rules\": {\".read\": \"nope\"}}"}"#,
                    "Invalid rules at line 1, column 22"
                ),
                (#"{"operation": "read", "path": "/", "rules": 3}"#, "rules must be a rules document"),
            ]
            for (request, message) in cases {
                try await client.execute(uri: "/.settings/rules/simulate.json", method: .post, body: body(request)) {
                    (r: TestResponse) throws in
                    #expect(r.status == .badRequest, "\(request)")
                    #expect(String(buffer: r.body).contains(message), "\(request): \(String(buffer: r.body))")
                }
            }
            try await client.execute(uri: "/.settings/rules/simulate.json", method: .get) { (r: TestResponse) throws in
                #expect(r.status == .methodNotAllowed)
            }
        }
        try await withTestServer(.router, { $0.authToken = "admin-secret" }) { client in
            var (status, _) = try await self.simulate(client, #"{"operation": "read", "path": "/"}"#)
            #expect(status == .unauthorized)
            let verdict: JSONValue
            (status, verdict) = try await self.simulate(client, #"{"operation": "read", "path": "/"}"#, auth: "?auth=admin-secret")
            #expect(status == .ok)
            // A guarded server's namespaces start locked.
            #expect(verdict["allowed"] == false)
        }
    }
}
