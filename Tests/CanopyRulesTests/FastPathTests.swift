import CanopyCore
import CanopyRules
import Foundation
import Testing

/// The evaluator answers some forms without building values (`auth.uid` looked up once per
/// check, snapshot tests on nodes, `child()` chains without snapshots). Each is compared here with
/// a form of the same meaning that takes the general path, over auth values and data of every
/// shape, so a fast path cannot drift from the general one.
@Suite("Evaluator fast paths agree with the general path")
struct FastPathTests {
    /// `auth` values: anonymous, users with string, numeric, missing and object `uid`s, and
    /// non-object variables (`auth_variable_override`).
    static let auths: [AuthContext?] = [
        nil, AuthContext(uid: "u1"), AuthContext(uid: ""), AuthContext(variable: json(#"{"uid": 5}"#)),
        AuthContext(variable: json(#"{"uid": {"a": 1}}"#)), AuthContext(variable: json(#"{"name": "x"}"#)),
        AuthContext(variable: json(#"["u1"]"#)), AuthContext(variable: .string("u1")), AuthContext(variable: .null),
    ]

    /// Pairs of expressions that must give the same verdict: the first takes a fast path, the
    /// second the general one (`auth['uid']` is a member access by a computed name;
    /// `child('a').parent().child('a')` builds snapshots).
    static let pairs: [(fast: String, general: String)] = [
        ("auth.uid === 'u1'", "auth['uid'] === 'u1'"),
        ("auth.uid == null", "auth['u' + 'id'] == null"),
        ("auth.uid.length > 0", "auth['uid'].length > 0"),
        ("auth.uid.beginsWith('u')", "auth['uid'].beginsWith('u')"),
        ("auth.uid + '' === 'u1'", "auth['uid'] + '' === 'u1'"),
        ("data.child('a').val() === auth.uid", "data.child('a').parent().child('a').val() === auth['uid']"),
        ("data.child('a').exists()", "data.child('a').parent().child('a').exists()"),
        ("data.child('a/b').isString()", "data.child('a').child('b').parent().child('b').isString()"),
        ("data.child('a').isNumber()", "data.parent().child('r').child('a').isNumber()"),
        ("data.child('a').isBoolean()", "data.child('a').parent().child('a').isBoolean()"),
        ("data.child('a').hasChildren()", "data.child('a').parent().child('a').hasChildren()"),
        ("data.hasChild('a/b')", "data.child('a').parent().hasChild('a/b')"),
        ("data.hasChildren(['a', 'c'])", "data.child('c').parent().hasChildren(['a', 'c'])"),
        ("data.child('a').val() >= 0", "data.child('a').parent().child('a').val() >= 0"),
        ("data.child('a').val().length < 3", "data.child('a').parent().child('a').val().length < 3"),
        ("data.child('a').val()", "data.child('a').parent().child('a').val() == true"),
        ("!data.child('a').exists() || auth.uid != null", "!(data.child('a').parent().child('a').exists()) || auth['uid'] != null"),
        ("auth != null", "auth != data.child('zz').val()"),
        ("null === auth", "auth == (data.child('zz').val())"),
        ("data.child('a').val() == null", "data.child('a').parent().child('a').val() == null"),
        ("null != data.child('a/b').val()", "null != data.child('a').child('b').parent().child('b').val()"),
        ("data.hasChild('a')", "data.child('a').parent().hasChild('a')"),
        ("auth.uid == data.child('a').val()", "auth['uid'] == data.child('a').parent().child('a').val()"),
        ("data.child('a').val() !== auth.uid", "data.child('a').parent().child('a').val() !== auth['uid']"),
    ]

    /// Values of `/r/a` (and a sibling `/r/c`): missing, each primitive type, and an object.
    static let values: [String] = [
        "null", #""u1""#, #""""#, "5", "-1", "true", "false", #"{"b": "s"}"#, #"{"b": 1}"#,
    ]

    @Test("a fast form and its general form give the same verdict", arguments: Self.pairs.indices)
    func agree(_ pair: Int) throws {
        let (fast, general) = Self.pairs[pair]
        let fastEngine = RulesEngine(try document(rules: .object(["r": .object([".read": .string(fast)])])))
        let generalEngine = RulesEngine(try document(rules: .object(["r": .object([".read": .string(general)])])))
        var allowed = 0
        for value in Self.values {
            let root = node(json(#"{"r": {"a": \#(value), "c": 1}}"#))
            for auth in Self.auths {
                let a = fastEngine.canRead(path: path("/r"), auth: auth, root: root, now: 0)
                let b = generalEngine.canRead(path: path("/r"), auth: auth, root: root, now: 0)
                #expect(
                    a.isAllowed == b.isAllowed,
                    "\(fast) vs \(general) with /r/a = \(value), auth \(auth.map { text($0.variable) } ?? "null")")
                if a.isAllowed { allowed += 1 }
            }
        }
        // Each pair is allowed somewhere and denied somewhere: the comparison means something.
        #expect(allowed > 0 && allowed < Self.values.count * Self.auths.count, "\(fast): allowed \(allowed) times")
    }

    @Test("compiled rules agree with the tree-walking evaluator on every expression vector, as .read and as .validate")
    func vectorsAgree() throws {
        var compared = 0
        for vector in ExpressionVector.all {
            let (rules, _) = vector.rules
            let root = node(vector.row["root"] ?? .null)
            let auths = [vector.auth, nil, AuthContext(uid: "u1")]
            let written = [Node.empty, .leaf(.string("u1")), node(json(#"{"a": 1, "b": {"c": "u1"}}"#))]
            if let loaded = try? document(rules: rules) {
                let failure = RulesFuzzing.evaluatorsDisagree(
                    loaded, auths: auths, data: root, written: written, query: vector.query ?? .none)
                #expect(failure == nil, "\(vector.expression): \(failure ?? "")")
                compared += 1
            }
            let asValidate = text(rules).replacingOccurrences(of: "\".read\"", with: "\".validate\"")
            if let loaded = try? RulesDocument(parsing: "{\"rules\": \(asValidate)}") {
                let failure = RulesFuzzing.evaluatorsDisagree(loaded, auths: auths, data: root, written: written)
                #expect(failure == nil, "\(vector.expression) as .validate: \(failure ?? "")")
                compared += 1
            }
        }
        #expect(compared > ExpressionVector.all.count, "only \(compared) documents compared")
    }

    @Test("compiled rules agree with the tree-walking evaluator on the fast-path pairs")
    func pairsAgree() throws {
        let auths = Self.auths
        for (fast, general) in Self.pairs {
            for expression in [fast, general] {
                let loaded = try document(rules: .object(["r": .object([".read": .string(expression), ".validate": .string(expression)])]))
                for value in Self.values {
                    let root = node(json(#"{"r": {"a": \#(value), "c": 1}}"#))
                    let failure = RulesFuzzing.evaluatorsDisagree(
                        loaded, auths: auths, data: root, written: [root.child(ChildKey("r")), .empty])
                    #expect(failure == nil, "\(expression) with /r/a = \(value): \(failure ?? "")")
                }
            }
        }
    }

    /// `.validate` forms on `newData` that compiled rules answer from the node in place.
    static let newDataForms: [String] = [
        "newData.isString()", "newData.isNumber()", "newData.isBoolean()", "newData.val() >= 0", "newData.val() < 3",
        "newData.val() === auth.uid", "auth.uid === newData.val()", "newData.val() === 5", "newData.val() !== true",
        "newData.child('b').val() === 's'", "newData.val().length <= 2", "newData.child('b').isNumber()",
        "newData.val() == data.val()",
    ]

    /// Written values of every shape: missing, primitives, objects, and leaves with a priority.
    static let writtenShapes: [Node] = {
        var shapes = Self.values.map { node(json($0)) }
        shapes += [.leaf(.double(1.5)), .leaf(.string("u")), .leaf(.int(5))]
        shapes += [Node.leaf(.int(5)), .leaf(.string("u1")), .leaf(.bool(true)), .leaf(.double(-2))].map { $0.withPriority(.int(1)) }
        return shapes
    }()

    @Test("newData forms answered in place agree with the evaluator, priorities included", arguments: Self.newDataForms)
    func newDataFormsAgree(_ expression: String) throws {
        let loaded = try document(rules: .object([".write": .bool(true), "r": .object([".validate": .string(expression)])]))
        let root = node(json(#"{"r": 5}"#))
        let failure = RulesFuzzing.evaluatorsDisagree(loaded, auths: Self.auths, data: root, written: Self.writtenShapes)
        #expect(failure == nil, "\(expression): \(failure ?? "")")
        // The form passes for some values and fails for others: the comparison means something.
        let engine = RulesEngine(loaded, explains: false)
        let allowed = Self.writtenShapes.filter { value in
            !value.isEmpty && engine.canWrite(path: path("/r"), value: value, auth: AuthContext(uid: "u1"), root: root, now: 0).isAllowed
        }
        #expect(!allowed.isEmpty && allowed.count < Self.writtenShapes.count - 1, "\(expression): \(allowed.count) allowed")
    }
}
