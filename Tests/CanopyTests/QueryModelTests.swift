import Canopy
import CanopyTestSupport
import Foundation
import Testing

@Suite("Queries against a brute-force oracle")
struct QueryModelTests {
    static let keys = ["a", "b", "c", "d", "e", "1", "2", "10", "03"]

    struct Random: ModelRandom {
        var rng: SeededGenerator
        mutating func key() -> String { QueryModelTests.keys[self.int(QueryModelTests.keys.count)] }

        mutating func scalar() -> JSONValue {
            switch self.int(7) {
            case 0: return .null
            case 1: return .bool(self.chance(50))
            case 2, 3: return .int(Int64(self.int(4)))
            case 4: return .double(1.5)
            default: return .string(["x", "y", "A"][self.int(3)])
            }
        }

        /// A child: usually an object with `v` and `w/x`, sometimes a plain leaf.
        mutating func child() -> JSONValue {
            if self.chance(15) { return self.scalar() }
            var object: [String: JSONValue] = [:]
            if self.chance(80) { object["v"] = self.scalar() }
            if self.chance(50) { object["w"] = ["x": self.scalar()] }
            if self.chance(30) { object["u"] = .int(Int64(self.int(3))) }
            if self.chance(25) { object[".priority"] = self.priority() }
            return .object(object)
        }

        mutating func query() -> OracleQuery { self.query(keyChance: 40, boundChance: 45, limitChance: 60, maxLimit: 4) }
    }

    @Test("random queries over random writes raise exactly the oracle's events", arguments: [11, 12, 13, 14, 15, 16] as [UInt64])
    func randomQueries(seed: UInt64) async throws {
        try await onComputeThreads { try self.randomQueriesScenario(seed: seed) }
    }

    func randomQueriesScenario(seed: UInt64) throws {
        let db = try manualDatabase()
        defer { db.close() }
        try Self.run(seed: seed, steps: nil, on: db) { db.drain() }
    }

    /// Random query listeners and writes on `db` (empty, loop mode `.manual`), each step's events
    /// and one-shot reads compared with the oracle's once `settle` has run the loop until the step
    /// is done. `steps`: the default number when `nil`.
    static func run(seed: UInt64, steps: Int?, on db: Database, settle: () throws -> Void) throws {
        var random = Random(rng: SeededGenerator(seed: seed))
        let log = EventLog()
        var oracle = EventOracle()
        var model = ModelTree()
        var handles: [Int: (DatabaseQuery, DatabaseHandle)] = [:]
        var nextID = 0
        let list = db.reference(withPath: "list")

        // Some initial data.
        var initial: [String: JSONValue] = [:]
        for _ in 0..<6 { initial[random.key()] = random.child() }
        try list.queueSetValue(JSONValue.object(initial))
        model.set(ModelNode.from(.object(initial)), at: ["list"])
        try settle()

        func addListener() throws {
            let query = random.query()
            let type = DataEventType.allCases[random.int(DataEventType.allCases.count)]
            let id = nextID
            nextID += 1
            let q = query.apply(to: list)
            let handle = q.observe(
                type,
                andPreviousSiblingKeyWith: { snapshot, previous in
                    log.events.append(
                        RecordedEvent(listener: id, type: type, key: snapshot.key, previous: previous, value: snapshot.exportJSON))
                },
                withCancel: { error in
                    // Closing the database at the end cancels every observer; nothing else may.
                    if (error as? DatabaseError)?.code != .closed { Issue.record("query \(query) was cancelled: \(error)") }
                })
            handles[id] = (q, handle)
            let listener = EventOracle.Listener(id: id, path: ["list"], type: type, query: query)
            oracle.add(listener)
            try settle()
            #expect(log.take() == oracle.initialEvents(listener, tree: model), "initial events of L\(id) \(type) \(query)")
            // A one-shot read of the same query agrees with the oracle too.
            var read: JSONValue = .null
            q.getData { _, snapshot in read = snapshot?.exportJSON ?? .null }
            try settle()
            #expect(read == (query.viewNode(model.node(at: ["list"]))?.export ?? .null), "getData of \(query)")
        }

        for _ in 0..<14 { try addListener() }
        for step in 0..<(steps ?? 1200) {
            if step % 150 == 149, let id = handles.keys.sorted().first {
                let (q, handle) = handles.removeValue(forKey: id)!
                q.removeObserver(withHandle: handle)
                oracle.remove(id: id)
                try addListener()
            }
            let old = model
            var written = ["list"]
            var description = ""
            switch random.int(20) {
            case 0..<7:
                let step = try random.setChild(in: list, &model)
                written = ["list", step.key]
                description = step.description
            case 7..<10:
                let key = random.key()
                let value = random.scalar()
                try list.child(key).child("v").queueSetValue(value)
                model.set(ModelNode.from(value), at: ["list", key, "v"])
                written = ["list", key, "v"]
                description = "set \(key)/v = \(value.jsonString())"
            case 10..<12:
                let step = try random.removeChild(in: list, &model)
                written = ["list", step.key]
                description = step.description
            case 12..<14:
                let step = random.setPriority(in: list, &model)
                written = ["list", step.key]
                description = step.description
            case 14..<17:
                description = try random.update(list, &model, maxEntries: 3, removals: 25)
            case 17:
                var value: [String: JSONValue] = [:]
                for _ in 0..<(random.int(7)) { value[random.key()] = random.child() }
                try list.queueSetValue(JSONValue.object(value))
                model.set(ModelNode.from(.object(value)), at: ["list"])
                description = "set list = \(JSONValue.object(value).jsonString())"
            case 18:
                let value = random.scalar()
                try list.queueSetValue(value)
                model.set(ModelNode.from(value), at: ["list"])
                description = "set list = \(value.jsonString())"
            default:
                let priority = random.priority()
                list.setPriority(priority.anyValue) { _, _ in }
                if let node = model.node(at: ["list"]) {
                    model.set(node.withPriority(priority == JSONValue.null ? Optional<JSONValue>.none : priority), at: ["list"])
                }
                description = "setPriority list \(priority.jsonString())"
            }
            try settle()
            let expected = oracle.events(written: written, old: old, new: model)
            let actual = log.take()
            if actual != expected {
                let queries = oracle.listeners.map { "L\($0.id) \($0.type) \($0.query)" }.joined(separator: "\n")
                Issue.record(
                    "step \(step): \(description)\nbefore: \(old.node(at: ["list"])?.export.jsonString() ?? "null")\nactual:   \(actual)\nexpected: \(expected)\nlisteners:\n\(queries)"
                )
                return
            }
        }
    }
}
