import CanopyCore
import CanopyRules
import Foundation
import Testing

/// One row of the operation vectors (Fixtures/operation-vectors.json).
struct OperationVector: CustomTestStringConvertible, Sendable {
    static let uid = "user-7Fq2"
    static let now: Int64 = 1_700_000_000_000

    let id: String
    let row: JSONValue
    let ruleSets: JSONValue

    var testDescription: String {
        "#\(self.id) \(self.row["op"]?.stringValue ?? "") \(self.row["path"]?.stringValue ?? "")\(self.row["note"]?.stringValue.map { " (\($0))" } ?? "")"
    }

    static func load(derived: Bool) -> [OperationVector] {
        let file = fixture("operation-vectors.json")
        return file["operations"]!.arrayValue
            .filter { ($0["derived"] == .bool(true)) == derived }
            .map { OperationVector(id: $0["id"]!.stringValue!, row: $0, ruleSets: file["ruleSets"]!) }
    }

    /// `<uid>` replaced by the signed-in user's uid, everywhere in a value.
    static func substitute(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let s): return .string(s.replacingOccurrences(of: "<uid>", with: uid))
        case .object(let o):
            return .object(
                Dictionary(uniqueKeysWithValues: o.map { ($0.key.replacingOccurrences(of: "<uid>", with: uid), substitute($0.value)) }))
        case .array(let a): return .array(a.map(substitute))
        default: return value
        }
    }

    var auth: AuthContext? {
        switch self.row["auth"] {
        case .string("anon")?: return AuthContext(uid: "anon-9xZ", token: ["firebase": ["sign_in_provider": "anonymous"]])
        case .string("uid")?: return AuthContext(uid: OperationVector.uid, token: ["firebase": ["sign_in_provider": "password"]])
        case .object(let o)?: return AuthContext(variable: .object(o))
        default: return nil
        }
    }

    var query: QueryDescription? {
        guard let q = self.row["query"].map(OperationVector.substitute) else { return nil }
        var d = QueryDescription()
        if case .string(let child)? = q["orderByChild"] { d.order = .child(child) }
        if q["orderByValue"] == .bool(true) { d.order = .value }
        if let e = q["equalTo"] { d.equalTo = .some(node(e).leafValue) }
        if let e = q["endAt"] { d.endAt = .some(node(e).leafValue) }
        if case .int(let n)? = q["limitToFirst"] { d.limitToFirst = Int(n) }
        return d
    }

    func verdict() throws -> RuleVerdict {
        let rules: JSONValue
        if case .string(let name)? = self.row["rules"] { rules = self.ruleSets[name]! } else { rules = self.row["rules"]! }
        let engine = RulesEngine(try document(rules: rules))
        let root = node(self.row["data"] ?? .null)
        let target = path(OperationVector.substitute(self.row["path"]!).stringValue!)
        let now = OperationVector.now
        switch self.row["op"]!.stringValue! {
        case "read":
            return engine.canRead(path: target, auth: self.auth, root: root, query: self.query, now: now)
        case "set":
            let value = node(OperationVector.substitute(self.row["value"] ?? .null), now: now)
            return engine.canWrite(path: target, value: value, auth: self.auth, root: root, now: now)
        default:
            guard case .object(let updates)? = self.row["updates"].map(OperationVector.substitute) else {
                throw RulesError("bad row", line: 0, column: 0)
            }
            let changes = updates.keys.sorted().map {
                RulesEngine.Change(path: target.appending(path($0)), value: node(updates[$0]!, now: now))
            }
            return engine.canWrite(changes: changes, auth: self.auth, root: root, now: now)
        }
    }

    var expected: Bool { self.row["expect"]?.stringValue == "allow" }
}

@Suite("Operation vectors")
struct OperationVectorTests {
    @Test("recorded verdicts (production, bolt, targaryen, firebase-server)", arguments: OperationVector.load(derived: false))
    func recorded(_ vector: OperationVector) throws {
        let verdict = try vector.verdict()
        #expect(verdict.isAllowed == vector.expected, "\(verdict.reason)\n\(verdict.trace)")
    }

    @Test("verdicts derived from recorded behaviour (to confirm against production)", arguments: OperationVector.load(derived: true))
    func derived(_ vector: OperationVector) throws {
        let verdict = try vector.verdict()
        #expect(verdict.isAllowed == vector.expected, "\(verdict.reason)\n\(verdict.trace)")
    }

    @Test("the fixture holds every operation vector that is a rules-language verdict")
    func coverage() {
        let ids = Set((OperationVector.load(derived: false) + OperationVector.load(derived: true)).map { $0.id.prefix { $0.isNumber } })
        let serverBehaviour: Set<Substring> = ["69", "70", "71", "76"]
        for row in 1...112 where !serverBehaviour.contains(Substring(String(row))) {
            #expect(ids.contains(Substring(String(row))), "row \(row) missing")
        }
    }
}
