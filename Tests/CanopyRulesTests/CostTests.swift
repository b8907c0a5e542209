import CanopyCore
import CanopyRules
import Testing

/// Evaluation visits only the rule nodes along the written paths and the written data under them.
@Suite("Cost: rules run only where a write touches")
struct CostTests {
    static let rules = """
        {"rules": {
          ".read": "auth != null",
          ".write": "auth != null",
          "items": {
            ".indexOn": ["score"],
            "$id": {
              ".validate": "newData.hasChildren(['score'])",
              "score": {".validate": "newData.isNumber()"},
              "tags": {"$tag": {".validate": "newData.isString()"}}
            }
          },
          "other": {"$x": {".validate": false}}
        }}
        """

    static let bigTree: Node = {
        var root = Node.empty
        for i in 0..<5_000 {
            root.set(.leaf(.int(Int64(i))), at: [ChildKey("items"), ChildKey("i\(i)"), ChildKey("score")][...])
            root.set(.leaf(.string("x")), at: [ChildKey("other"), ChildKey("o\(i)")][...])
        }
        return root
    }()

    @Test("a write of one item in a large tree evaluates one .write and the item's .validate rules")
    func oneItem() throws {
        let engine = RulesEngine(try RulesDocument(parsing: Self.rules))
        let value = node(json(#"{"score": 3, "tags": {"a": "x", "b": "y"}}"#))
        let verdict = engine.canWrite(path: path("/items/i7"), value: value, auth: AuthContext(uid: "u"), root: Self.bigTree, now: 0)
        #expect(verdict.isAllowed, "\(verdict.reason)")
        // .write at /, .validate at /items/i7, /items/i7/score, /items/i7/tags/a, /items/i7/tags/b.
        #expect(
            verdict.trace.map(\.rule.location.description) == ["/", "/items/i7", "/items/i7/score", "/items/i7/tags/a", "/items/i7/tags/b"])
    }

    @Test("a read evaluates only the .read rules on its path")
    func read() throws {
        let engine = RulesEngine(try RulesDocument(parsing: Self.rules))
        let verdict = engine.canRead(path: path("/items/i7"), auth: AuthContext(uid: "u"), root: Self.bigTree, now: 0)
        #expect(verdict.isAllowed && verdict.trace.count == 1)
    }

    @Test("a priority write is judged as a write of its node")
    func priorityWrite() throws {
        let engine = RulesEngine(try document(rules: json(#"{"a": {".write": "auth != null", "$other": {".write": true}}}"#)))
        let signedOut = engine.canWrite(path: path("/a/.priority"), value: .leaf(.int(1)), auth: nil, root: .empty, now: 0)
        #expect(!signedOut.isAllowed)
        #expect(
            engine.canWrite(path: path("/a/.priority"), value: .leaf(.int(1)), auth: AuthContext(uid: "u"), root: .empty, now: 0).isAllowed)
    }
}
