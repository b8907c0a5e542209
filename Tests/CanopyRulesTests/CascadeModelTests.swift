import CanopyCore
import CanopyRules
import CanopyTestSupport
import Testing

/// Random rules documents, auth, data and writes: the engine and ``ReferenceModel`` agree.
@Suite("Model: the engine against a brute-force reference of the cascading semantics")
struct CascadeModelTests {
    typealias Context = ReferenceModel.Context

    /// Expressions usable anywhere, with their meaning.
    static let common: [ReferenceModel.Rule] = [
        .init(source: "true") { _ in true },
        .init(source: "false") { _ in false },
        .init(source: "auth != null") { $0.uid != nil },
        .init(source: "auth.uid == 'u1'") { $0.uid == "u1" },
        .init(source: "data.exists()") { $0.data != .absent },
        .init(source: "!data.exists()") { $0.data == .absent },
        .init(source: "data.val() == 1") { $0.data == .number(1) },
        .init(source: "data.val() > 1") { if case .number(let n) = $0.data { return n > 1 } else { return false } },
        .init(source: "data.hasChildren() || auth.uid == 'u2'") { $0.data == .object || $0.uid == "u2" },
    ]

    /// Expressions that need `newData` (not in `.read`).
    static let writeOnly: [ReferenceModel.Rule] = [
        .init(source: "newData.exists()") { $0.newData != .absent },
        .init(source: "newData.isNumber()") { if case .number = $0.newData { return true } else { return false } },
        .init(source: "newData.val() == 1") { $0.newData == .number(1) },
        .init(source: "newData.val() + 1 == 3") { $0.newData == .number(2) },
        .init(source: "newData.hasChildren() && auth != null") { $0.newData == .object && $0.uid != nil },
        .init(source: "!newData.exists() || newData.val() != data.val()") { c in
            c.newData == .absent || c.newData == .object || c.data != c.newData
        },
    ]

    static func variableRules(_ names: [String]) -> [ReferenceModel.Rule] {
        names.flatMap { name in
            [
                ReferenceModel.Rule(source: "\(name) == 'a'") { $0.variables[name] == "a" },
                ReferenceModel.Rule(source: "auth.uid == \(name)") { $0.uid != nil && $0.variables[name] == $0.uid },
            ]
        }
    }

    static let keys = ["a", "b", "c", "u1", "u2"]

    struct Random {
        var generator: SeededGenerator

        mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self.generator) < p }
        mutating func pick<T>(_ a: [T]) -> T { a.randomElement(using: &self.generator)! }

        mutating func rule(_ kind: String, wildcards: [String]) -> ReferenceModel.Rule? {
            guard self.chance(0.4) else { return nil }
            var pool = CascadeModelTests.common + CascadeModelTests.variableRules(wildcards)
            if kind != ".read" { pool += CascadeModelTests.writeOnly }
            return self.pick(pool)
        }

        /// A random rule tree: entries for the model and the rules object for the engine.
        mutating func tree(pattern: [String], wildcards: [String], depth: Int, into entries: inout [ReferenceModel.Entry]) -> JSONValue {
            var rules: [String: ReferenceModel.Rule] = [:]
            var object: [String: JSONValue] = [:]
            for kind in [".read", ".write", ".validate"] {
                if let rule = self.rule(kind, wildcards: wildcards) {
                    rules[kind] = rule
                    object[kind] = rule.source == "true" || rule.source == "false" ? .bool(rule.source == "true") : .string(rule.source)
                }
            }
            entries.append(ReferenceModel.Entry(pattern: pattern, rules: rules))
            guard depth < 3 else { return .object(object) }
            for key in ["a", "b", "u1"] where self.chance(0.35) {
                object[key] = self.tree(pattern: pattern + [key], wildcards: wildcards, depth: depth + 1, into: &entries)
            }
            if self.chance(0.5) {
                let name = "$w\(depth)"
                object[name] = self.tree(pattern: pattern + [name], wildcards: wildcards + [name], depth: depth + 1, into: &entries)
            }
            return .object(object)
        }

        mutating func path(maxDepth: Int = 3) -> [String] {
            (0..<Int.random(in: 0...maxDepth, using: &self.generator)).map { _ in self.pick(CascadeModelTests.keys) }
        }

        /// A value as relative leaves (empty: null).
        mutating func value() -> ReferenceModel.Data {
            switch Int.random(in: 0..<5, using: &self.generator) {
            case 0: return [:]
            case 1: return [[]: 1]
            case 2: return [[]: 2]
            case 3: return [["a"]: 1, ["b", "c"]: 2]
            default: return [[self.pick(CascadeModelTests.keys)]: Int.random(in: 1...2, using: &self.generator)]
            }
        }
    }

    static func node(_ leaves: ReferenceModel.Data) -> Node {
        var n = Node.empty
        for (path, value) in leaves { n.set(.leaf(.int(Int64(value))), at: path.map { ChildKey($0) }[...]) }
        return n
    }

    static func auth(_ uid: String?) -> AuthContext? { uid.map { AuthContext(uid: $0) } }

    @Test("random documents, auth, data, reads, sets and multi-path updates", arguments: 0..<8)
    func agree(batch: UInt64) async throws {
        try await onComputeThreads { try self.agreeScenario(batch: batch) }
    }

    func agreeScenario(batch: UInt64) throws {
        var random = Random(generator: SeededGenerator(seed: 0x5EED_0000 + batch))
        var checkedWrites = 0
        var allowedWrites = 0
        for _ in 0..<60 {
            var entries: [ReferenceModel.Entry] = []
            let rules = random.tree(pattern: [], wildcards: [], depth: 0, into: &entries)
            let model = ReferenceModel(entries: entries)
            let engine = RulesEngine(try document(rules: rules))
            // A server's engine: answers without explanations, by a walk that keeps less.
            let quiet = RulesEngine(engine.document, explains: false)
            for _ in 0..<25 {
                var data: ReferenceModel.Data = [:]
                for _ in 0..<3 { data = ReferenceModel.write(data, at: random.path(), leaves: random.value()) }
                let root = Self.node(data)
                let uid: String? = random.pick([nil, "u1", "u2"])
                let readPath = random.path()
                let read = engine.canRead(path: DatabasePath(readPath.map { ChildKey($0) }), auth: Self.auth(uid), root: root, now: 5)
                #expect(
                    read.isAllowed == model.canRead(readPath, uid: uid, data: data),
                    "read \(readPath) uid \(uid ?? "-") data \(data) rules \(text(rules))")
                var writes: [([String], ReferenceModel.Data)] = [(random.path(), random.value())]
                if random.chance(0.3) {
                    let other = random.path(maxDepth: 2)
                    let overlaps = writes.contains { w in zip(w.0, other).allSatisfy { $0 == $1 } }
                    if !overlaps { writes.append((other, random.value())) }
                }
                let changes = writes.map { RulesEngine.Change(path: DatabasePath($0.0.map { ChildKey($0) }), value: Self.node($0.1)) }
                let verdict = engine.canWrite(changes: changes, auth: Self.auth(uid), root: root, now: 5)
                let expected = model.canWrite(writes, uid: uid, data: data)
                #expect(
                    verdict.isAllowed == expected, "write \(writes) uid \(uid ?? "-") data \(data) rules \(text(rules)): \(verdict.reason)")
                let quietVerdict = quiet.canWrite(changes: changes, auth: Self.auth(uid), root: root, now: 5)
                #expect(quietVerdict.isAllowed == verdict.isAllowed, "quiet engine: write \(writes) rules \(text(rules))")
                if !verdict.isAllowed {
                    #expect(quietVerdict.decidingRule == verdict.decidingRule && quietVerdict.reason == verdict.reason)
                }
                checkedWrites += 1
                if expected { allowedWrites += 1 }
            }
        }
        // The generator must exercise both outcomes.
        #expect(allowedWrites > 50 && allowedWrites < checkedWrites - 50, "\(allowedWrites) of \(checkedWrites) allowed")
    }
}
