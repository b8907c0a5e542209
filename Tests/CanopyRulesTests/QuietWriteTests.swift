import CanopyCore
import CanopyRules
import Testing

/// A server's engine gives answers without explanations (`explains: false`), and its write walk
/// then keeps no location for rules that do not read one. These check that it still gives the
/// explained engine's answers, and names a failure as precisely.
@Suite("Write checks without explanations")
struct QuietWriteTests {
    static func engines(_ rules: String) throws -> [RulesEngine] {
        let loaded = try document(rules: json(rules))
        return [RulesEngine(loaded, explains: true), RulesEngine(loaded, explains: false)]
    }

    @Test("a .validate under a set that calls parent() reads its own location")
    func parentBelowSet() throws {
        let rules =
            #"{".read": true, ".write": true, "items": {"$id": {"name": {".validate": "newData.parent().child('kind').val() === 'x'"}}}}"#
        for engine in try Self.engines(rules) {
            let allowed = engine.canWrite(
                path: path("/items/1"), value: node(json(#"{"name": "n", "kind": "x"}"#)), auth: nil, root: .empty, now: 0)
            let denied = engine.canWrite(
                path: path("/items/1"), value: node(json(#"{"name": "n", "kind": "y"}"#)), auth: nil, root: .empty, now: 0)
            #expect(allowed.isAllowed, "explains: \(engine.explains)")
            #expect(!denied.isAllowed, "explains: \(engine.explains)")
            #expect(denied.decidingRule?.location == path("/items/1/name"), "explains: \(engine.explains)")
        }
    }

    @Test("a .validate that fails deep under a set is named with its location")
    func deepFailureNamed() throws {
        let rules = #"""
            {".write": true, "posts": {"$p": {"a": {"$k": {"b": {".validate": "newData.isNumber()"}}}, "c": {".validate": "newData.isString()"}}}}
            """#
        let value = node(json(#"{"a": {"x": {"b": 1}, "y": {"b": "no"}}, "c": "s"}"#))
        let verdicts = try Self.engines(rules).map { $0.canWrite(path: path("/posts/k1"), value: value, auth: nil, root: .empty, now: 0) }
        #expect(verdicts.allSatisfy { !$0.isAllowed })
        #expect(verdicts.allSatisfy { $0.decidingRule?.location == path("/posts/k1/a/y/b") })
        #expect(verdicts[0].reason == verdicts[1].reason && verdicts[0].reason.contains("/posts/k1/a/y/b"), "\(verdicts.map(\.reason))")
        // The same value with the bad leaf fixed passes both.
        let fixed = node(json(#"{"a": {"x": {"b": 1}, "y": {"b": 2}}, "c": "s"}"#))
        for engine in try Self.engines(rules) {
            #expect(engine.canWrite(path: path("/posts/k1"), value: fixed, auth: nil, root: .empty, now: 0).isAllowed)
        }
    }

    @Test("rule keys match data keys by their bytes, as data keys match each other", arguments: [1, 12])
    func ruleKeysMatchBytes(literals: Int) throws {
        // "café" composed (é) and decomposed (e + U+0301): canonically equivalent, different keys.
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        var object: [String: JSONValue] = [composed: .object([".write": .bool(true)])]
        // More literal siblings than a scan compares, to take the hashed lookup too.
        for i in 1..<literals { object["k\(i)"] = .object([".write": .bool(false)]) }
        for engine in try Self.engines(text(.object(object))) {
            let value = Node.leaf(.int(1))
            #expect(engine.canWrite(path: DatabasePath([ChildKey(composed)]), value: value, auth: nil, root: .empty, now: 0).isAllowed)
            #expect(!engine.canWrite(path: DatabasePath([ChildKey(decomposed)]), value: value, auth: nil, root: .empty, now: 0).isAllowed)
        }
    }
}
