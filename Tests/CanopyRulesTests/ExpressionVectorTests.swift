import CanopyCore
import CanopyRules
import Testing

/// One row of the expression vectors (Fixtures/expression-vectors.json): an expression as the only `.read`.
struct ExpressionVector: CustomTestStringConvertible, Sendable {
    let row: JSONValue
    let users: JSONValue

    var testDescription: String { "#\(self.row["id"].map(text) ?? "") \(self.expression) → \(self.expected)" }
    var expression: String { self.row["expression"]!.stringValue! }
    var expected: String { self.row["expect"]!.stringValue! }

    static let all: [ExpressionVector] = {
        let file = fixture("expression-vectors.json")
        return file["expressions"]!.arrayValue.map { ExpressionVector(row: $0, users: file["users"]!) }
    }()

    /// The rules object: the expression at the root, or under one `$name` level per wildcard.
    var rules: (JSONValue, DatabasePath) {
        var rules: JSONValue = .object([".read": .string(self.expression)])
        var keys: [ChildKey] = []
        if case .object(let wildcards)? = self.row["wildcards"] {
            for (name, value) in wildcards.sorted(by: { $0.key > $1.key }) {
                rules = .object([name: rules])
                keys.insert(ChildKey(value.stringValue!), at: 0)
            }
        }
        return (rules, DatabasePath(keys))
    }

    var auth: AuthContext? {
        guard let user = self.users[self.row["user"]!.stringValue!], user != .null else { return nil }
        return AuthContext(variable: user)
    }

    var query: QueryDescription? {
        guard let q = self.row["query"] else { return nil }
        var d = QueryDescription()
        if case .string(let child)? = q["orderByChild"] { d.order = .child(child) }
        if q["orderByValue"] == .bool(true) { d.order = .value }
        if let e = q["equalTo"] { d.equalTo = .some(node(e).leafValue) }
        if let e = q["endAt"] { d.endAt = .some(node(e).leafValue) }
        return d
    }
}

@Suite("Expression vectors")
struct ExpressionVectorTests {
    @Test("each expression as a .read rule gives the recorded result", arguments: ExpressionVector.all)
    func expression(_ vector: ExpressionVector) throws {
        let (rules, location) = vector.rules
        let loaded: RulesDocument
        do {
            loaded = try document(rules: rules)
        } catch let error as RulesError {
            #expect(vector.expected == "rejected", "refused: \(error)")
            #expect(error.message.contains(vector.expression), "the error names the expression: \(error)")
            return
        }
        guard vector.expected != "rejected" else {
            Issue.record("loaded, but production rejected it")
            return
        }
        let root = node(vector.row["root"] ?? .null)
        let verdict = RulesEngine(loaded).canRead(path: location, auth: vector.auth, root: root, query: vector.query, now: 1_000)
        let outcome = verdict.trace.last?.outcome
        switch vector.expected {
        case "true":
            #expect(verdict.isAllowed)
            #expect(outcome == .true)
        case "false":
            #expect(!verdict.isAllowed)
            #expect(outcome == .false, "\(String(describing: outcome))")
        default:
            #expect(!verdict.isAllowed)
            guard case .error? = outcome else {
                Issue.record("expected a runtime error, got \(String(describing: outcome))")
                return
            }
        }
    }

    @Test(
        "a runtime error denies even under || true (the whole rule is false)",
        arguments: ExpressionVector.all.filter { $0.expected == "error" })
    func errorIsWholeRule(_ vector: ExpressionVector) throws {
        let (rules, location) = vector.rules
        guard case .object(var o) = rules, o[".read"] != nil else { return }
        o[".read"] = .string("(\(vector.expression)) || true")
        let engine = RulesEngine(try document(rules: .object(o)))
        let verdict = engine.canRead(
            path: location, auth: vector.auth, root: node(vector.row["root"] ?? .null), query: vector.query, now: 1_000)
        #expect(!verdict.isAllowed)
    }
}
