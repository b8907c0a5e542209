import CanopyCore
import CanopyRules
import Testing

/// ``RulesEngine/grantsEveryWrite``: the server skips judging a write when it is set, so it must
/// be set only where the walk allows every write, and the walk must deny some write wherever it
/// is not set for one of the reasons it names.
@Suite("Rules that grant every write")
struct GrantsEveryWriteTests {
    /// Documents that grant every write.
    static let openDocuments: [String] = [
        #"{".read": true, ".write": true}"#,
        #"{".write": true}"#,
        #"{".write": "true", "a": {".read": "auth != null", ".indexOn": ["x"]}}"#,
        #"{".write": true, "a": {".write": false, "$b": {".write": "auth.uid === $b"}}}"#,
    ]

    /// Documents that do not, each with a write (path, value, auth) the walk denies.
    static let closedExamples: [(rules: String, path: String, value: JSONValue, auth: AuthContext?)] = [
        (#"{".read": true, ".write": false}"#, "/a", 1, AuthContext(uid: "u")),
        (#"{".write": "auth != null"}"#, "/a", 1, nil),
        (#"{".write": true, ".validate": "newData.hasChildren()"}"#, "/", 1, nil),
        (#"{".write": true, "a": {"$b": {".validate": "newData.isString()"}}}"#, "/a/x", 1, nil),
        (#"{"a": {".write": true}}"#, "/b", 1, nil),
        (#"{".write": "1 == 2"}"#, "/a", 1, nil),
    ]

    /// Writes of every kind: deep and shallow paths, values of each type, deletes, priorities.
    static let writes: [(path: String, value: JSONValue)] = [
        ("/a", 1), ("/a", "s"), ("/a", true), ("/a", .null), ("/a/b/c", json(#"{"x": {"y": 1}}"#)),
        ("/a/x", 1), ("/b", json(#"{"c": [1, 2]}"#)), ("/a/.priority", 3), ("/", json(#"{"a": 1}"#)),
    ]

    static let auths: [AuthContext?] = [nil, AuthContext(uid: "u"), AuthContext(uid: "x")]

    @Test("set where the walk allows every write", arguments: Self.openDocuments.indices)
    func open(_ index: Int) throws {
        let engine = RulesEngine(try document(rules: json(Self.openDocuments[index])), explains: false)
        #expect(engine.grantsEveryWrite)
        let root = node(json(#"{"a": {"x": "old"}, "b": 2}"#))
        for write in Self.writes {
            for auth in Self.auths {
                let verdict = engine.canWrite(path: path(write.path), value: node(write.value), auth: auth, root: root, now: 0)
                #expect(verdict.isAllowed, "\(Self.openDocuments[index]) \(write.path)")
            }
        }
    }

    @Test("not set where a write is denied", arguments: Self.closedExamples.indices)
    func closed(_ index: Int) throws {
        let example = Self.closedExamples[index]
        let engine = RulesEngine(try document(rules: json(example.rules)), explains: false)
        #expect(!engine.grantsEveryWrite)
        let verdict = engine.canWrite(path: path(example.path), value: node(example.value), auth: example.auth, root: .empty, now: 0)
        #expect(!verdict.isAllowed)
    }
}
