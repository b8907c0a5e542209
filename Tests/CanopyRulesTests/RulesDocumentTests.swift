import CanopyCore
import CanopyRules
import Testing

@Suite("Rules documents: Firebase JSON and load-time errors")
struct RulesDocumentTests {
    @Test("comments, multi-line strings and trailing commas are accepted; the source is kept verbatim")
    func lenientFormat() throws {
        let source = """
            /* Visit https://firebase.google.com/docs/database/security to learn more */
            {
              "rules": {
                // everyone signed in may read
                ".read": "auth != null &&
                          auth.uid != null",
                "posts": {
                  ".indexOn": ["author", "date",],
                  "$post": { ".write": true, },
                },
              },
            }
            """
        let loaded = try RulesDocument(parsing: source)
        #expect(loaded.source == source)
        #expect(loaded.indexOn(at: ["posts"]) == ["author", "date"])
        let engine = RulesEngine(loaded)
        #expect(engine.canRead(path: path("/x"), auth: AuthContext(uid: "u"), root: .empty, now: 0).isAllowed)
        #expect(!engine.canRead(path: path("/x"), auth: nil, root: .empty, now: 0).isAllowed)
        #expect(engine.canWrite(path: path("/posts/p1"), value: .leaf(.int(1)), auth: nil, root: .empty, now: 0).isAllowed)
    }

    /// A bad document, the message it must contain, and where the error must point.
    struct BadDocument: CustomTestStringConvertible, Sendable {
        let name: String
        let source: String
        let message: String
        let line: Int
        let column: Int
        var testDescription: String { self.name }
    }

    static let bad: [BadDocument] = [
        BadDocument(name: "no rules property", source: "{\"ruls\": {}}", message: "Expected 'rules' property.", line: 1, column: 2),
        BadDocument(
            name: "duplicate key", source: "{\"rules\": {\n  \".read\": true,\n  \".read\": false\n}}", message: "Duplicate key '.read'",
            line: 3, column: 3),
        BadDocument(
            name: "unknown rule type", source: "{\"rules\": {\n  \".reed\": true\n}}", message: "Unknown rule type '.reed'", line: 2,
            column: 3),
        BadDocument(
            name: "number as a rule", source: "{\"rules\": {\".read\": 1}}", message: ".read at / must be a boolean", line: 1, column: 21),
        BadDocument(
            name: "two wildcards", source: "{\"rules\": {\"$a\": {}, \"$b\": {}}}", message: "only be one wildcard", line: 1, column: 22),
        BadDocument(
            name: "wildcard reused by a descendant", source: "{\"rules\": {\"$a\": {\"$a\": {}}}}", message: "already bound", line: 1,
            column: 19),
        BadDocument(
            name: ".indexOn of numbers", source: "{\"rules\": {\".indexOn\": [1, 2]}}", message: ".indexOn at / must list strings", line: 1,
            column: 25),
        BadDocument(
            name: "unterminated string", source: "{\"rules\": {\".read\": \"true}}", message: "Unterminated string", line: 1, column: 21),
        BadDocument(
            name: "unknown variable", source: "{\n  \"rules\": {\n    \".read\": \"skies === 'blue'\"\n  }\n}",
            message: "Unknown variable 'skies' in .read at /: skies === 'blue'", line: 3, column: 15),
        BadDocument(
            name: "wildcard not in scope", source: "{\"rules\": {\"a\": {\n\".write\": \"$color == 'red'\"}}}",
            message: "no $color wildcard on this rule's path in .write at /a: $color == 'red'", line: 2, column: 12),
        BadDocument(
            name: "newData in .read", source: "{\"rules\": {\n\".read\": \"newData.exists()\"}}",
            message: "newData is not available in .read rules", line: 2, column: 11),
        BadDocument(
            name: "wrong argument type", source: "{\"rules\": {\".read\": \"auth.uid.contains(7)\"}}",
            message: "contains() needs a string argument, not a number", line: 1, column: 40),
        BadDocument(
            name: "non-boolean rule", source: "{\"rules\": {\".read\": \"'yes'\"}}", message: "must evaluate to a boolean", line: 1,
            column: 22),
        BadDocument(
            name: "assignment", source: "{\"rules\": {\".write\": \"root = 5\"}}", message: "Assignment is not allowed", line: 1, column: 28
        ),
        BadDocument(
            name: "a later line of a multi-line expression", source: "{\"rules\": {\".read\": \"auth != null &&\n   auth.uid.nope()\"}}",
            message: "No such string method 'nope'", line: 2, column: 12),
        BadDocument(
            name: "regex with g flag", source: "{\"rules\": {\".read\": \"root.val().matches(/a/g)\"}}", message: "only 'i' is allowed",
            line: 1, column: 41),
    ]

    @Test("a bad document is refused with the line, the column and the expression", arguments: bad)
    func refused(_ bad: BadDocument) {
        do {
            _ = try RulesDocument(parsing: bad.source)
            Issue.record("loaded")
        } catch {
            #expect(error.message.contains(bad.message), "\(error)")
            #expect(error.line == bad.line && error.column == bad.column, "\(error)")
            #expect(error.description.hasPrefix("\(bad.line):\(bad.column): "))
        }
    }

    @Test("very long and very deep expressions are refused, not a stack overflow")
    func depthLimit() throws {
        let long = Array(repeating: "auth != null", count: 60).joined(separator: " && ")
        #expect(
            RulesEngine(try document(rules: .object([".read": .string(long)]))).canRead(
                path: .root, auth: AuthContext(uid: "u"), root: .empty, now: 0
            ).isAllowed)
        for huge in [
            Array(repeating: "true", count: 5_000).joined(separator: " && "),
            String(repeating: "(", count: 5_000) + "true" + String(repeating: ")", count: 5_000),
            String(repeating: "!", count: 5_000) + "true", "root" + String(repeating: ".parent()", count: 5_000) + ".exists()",
        ] {
            #expect(throws: RulesError.self) { try document(rules: .object([".read": .string(huge)])) }
        }
    }

    @Test("literal children take precedence over the wildcard and bind nothing")
    func literalPrecedence() throws {
        let engine = RulesEngine(
            try document(rules: json(#"{"users": {"admin": {".read": false}, "$uid": {".read": "$uid === auth.uid"}}}"#)))
        #expect(!engine.canRead(path: path("/users/admin"), auth: AuthContext(uid: "admin"), root: .empty, now: 0).isAllowed)
        #expect(engine.canRead(path: path("/users/bob"), auth: AuthContext(uid: "bob"), root: .empty, now: 0).isAllowed)
    }

    @Test("the verdict names the deciding rule with its path, expression and line")
    func verdictNamesRule() throws {
        let source =
            "{\n \"rules\": {\n  \"users\": {\n   \"$uid\": {\n    \".write\": \"auth.uid === $uid\",\n    \".validate\": \"newData.isString()\"\n}}}}"
        let engine = RulesEngine(try RulesDocument(parsing: source))
        let allowed = engine.canWrite(
            path: path("/users/ann"), value: .leaf(.string("x")), auth: AuthContext(uid: "ann"), root: .empty, now: 0)
        #expect(allowed.isAllowed)
        #expect(allowed.decidingRule?.rulePath == "/users/$uid" && allowed.decidingRule?.kind == .write)
        #expect(allowed.decidingRule?.expression == "auth.uid === $uid" && allowed.decidingRule?.line == 5)
        #expect(allowed.decidingRule?.location == path("/users/ann"))
        let invalid = engine.canWrite(path: path("/users/ann"), value: .leaf(.int(1)), auth: AuthContext(uid: "ann"), root: .empty, now: 0)
        #expect(!invalid.isAllowed && invalid.decidingRule?.kind == .validate && invalid.decidingRule?.line == 6)
        let denied = engine.canWrite(path: path("/users/ann"), value: .leaf(.string("x")), auth: nil, root: .empty, now: 0)
        #expect(!denied.isAllowed && denied.decidingRule == nil && denied.reason.contains("No .write rule"))
        #expect(denied.trace.count == 1 && denied.trace[0].outcome == .false)
    }

    @Test("query rules see the engine's query parameters")
    func queryParams() throws {
        let engine = RulesEngine(
            try document(
                rules: json(
                    #"{"baskets": {".read": "query.orderByChild == 'owner' && query.equalTo == auth.uid && query.limitToFirst <= 10"}}"#)))
        let bound = QueryBound(value: .string("ann"), key: .min, inclusive: true)
        let end = QueryBound(value: .string("ann"), key: .min, inclusive: true)
        let params = QueryParams(index: .child([ChildKey("owner")]), start: bound, end: end, limit: .first(10))
        #expect(
            engine.canRead(path: path("/baskets"), auth: AuthContext(uid: "ann"), root: .empty, query: QueryDescription(params), now: 0)
                .isAllowed)
        #expect(
            !engine.canRead(path: path("/baskets"), auth: AuthContext(uid: "bob"), root: .empty, query: QueryDescription(params), now: 0)
                .isAllowed)
    }
}
