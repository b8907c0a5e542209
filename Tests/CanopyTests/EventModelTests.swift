import Canopy
import CanopyTestSupport
import Foundation
import Testing

/// Collects callbacks; used only on the draining thread.
final class EventLog: @unchecked Sendable {  // touched only by the thread that drains the loop
    var events: [RecordedEvent] = []
    func take() -> [RecordedEvent] {
        defer { self.events = [] }
        return self.events
    }
}

@Suite("Events against a brute-force oracle")
struct EventModelTests {
    static let keys = ["a", "b", "c", "1", "2", "10", "03", "-1"]

    struct Random {
        var rng: SeededGenerator

        mutating func int(_ n: Int) -> Int { Int(self.rng.next() % UInt64(n)) }
        mutating func chance(_ percent: Int) -> Bool { self.int(100) < percent }

        mutating func path(maxDepth: Int) -> [String] {
            (0..<self.int(maxDepth + 1)).map { _ in EventModelTests.keys[self.int(EventModelTests.keys.count)] }
        }

        mutating func priority() -> JSONValue {
            switch self.int(4) {
            case 0: return .int(Int64(self.int(3)))
            case 1: return .string(["x", "y"][self.int(2)])
            case 2: return .double(1.0)
            default: return .null
            }
        }

        mutating func leaf() -> JSONValue {
            switch self.int(6) {
            case 0: return .int(Int64(self.int(3)))
            case 1: return .double(1.0)
            case 2: return .string(["x", "y"][self.int(2)])
            case 3: return .bool(self.chance(50))
            case 4: return .null
            default: return .int(1)
            }
        }

        mutating func value(depth: Int) -> JSONValue {
            if depth == 0 || self.chance(40) {
                let leaf = self.leaf()
                if leaf != .null && self.chance(15) { return [".value": leaf, ".priority": self.priority()] }
                return leaf
            }
            var object: [String: JSONValue] = [:]
            for _ in 0..<self.int(4) { object[EventModelTests.keys[self.int(EventModelTests.keys.count)]] = self.value(depth: depth - 1) }
            if self.chance(20) { object[".priority"] = self.priority() }
            return .object(object)
        }
    }

    @Test("random writes raise exactly the oracle's events", arguments: [1, 2, 3, 4] as [UInt64])
    func randomWrites(seed: UInt64) async throws {
        try await onComputeThreads { try self.randomWritesScenario(seed: seed) }
    }

    func randomWritesScenario(seed: UInt64) throws {
        let db = try manualDatabase(clock: 1_700_000_000_000)
        defer { db.close() }
        try Self.run(seed: seed, steps: 1500, on: db) { db.drain() }
    }

    /// Random listeners and writes on `db` (empty, loop mode `.manual`), each step's events
    /// compared with the oracle's once `settle` has run the loop until the step is done.
    static func run(seed: UInt64, steps: Int, on db: Database, settle: () throws -> Void) throws {
        var random = Random(rng: SeededGenerator(seed: seed))
        let log = EventLog()
        var oracle = EventOracle()
        var model = ModelTree()
        var handles: [Int: (DatabaseReference, DatabaseHandle)] = [:]
        var nextID = 0

        func addListener() throws {
            let path = random.path(maxDepth: 3)
            let type = DataEventType.allCases[random.int(DataEventType.allCases.count)]
            let id = nextID
            nextID += 1
            let ref = path.isEmpty ? db.reference() : db.reference(withPath: path.joined(separator: "/"))
            let handle = ref.observe(
                type,
                andPreviousSiblingKeyWith: { snapshot, previous in
                    log.events.append(
                        RecordedEvent(listener: id, type: type, key: snapshot.key, previous: previous, value: snapshot.exportJSON))
                })
            handles[id] = (ref, handle)
            let listener = EventOracle.Listener(id: id, path: path, type: type)
            oracle.add(listener)
            try settle()
            #expect(
                log.take() == oracle.initialEvents(listener, tree: model),
                "initial events of L\(id) \(type) at /\(path.joined(separator: "/"))")
        }

        for _ in 0..<25 { try addListener() }
        for step in 0..<steps {
            if step % 100 == 99 {
                // Churn: drop a listener and add another.
                if let id = handles.keys.sorted().first(where: { _ in random.chance(50) }),
                    let (ref, handle) = handles.removeValue(forKey: id)
                {
                    ref.removeObserver(withHandle: handle)
                    oracle.remove(id: id)
                }
                try addListener()
            }
            let old = model
            let path = random.path(maxDepth: 3)
            let ref = path.isEmpty ? db.reference() : db.reference(withPath: path.joined(separator: "/"))
            var description = ""
            switch random.int(10) {
            case 0...4:
                let value = random.value(depth: 3 - path.count)
                try ref.queueSetValue(value)
                model.set(ModelNode.from(value), at: path)
                description = "set /\(path.joined(separator: "/")) = \(value.jsonString())"
            case 5:
                try ref.queueRemoveValue()
                model.set(nil, at: path)
                description = "remove /\(path.joined(separator: "/"))"
            case 6, 7:
                // A multi-path update with non-overlapping entries one or two levels down.
                var entries: [String: JSONValue] = [:]
                var modelEntries: [([String], JSONValue)] = []
                for _ in 0..<(1 + random.int(3)) {
                    let first = Self.keys[random.int(Self.keys.count)]
                    let relative = random.chance(50) ? [first] : [first, Self.keys[random.int(Self.keys.count)]]
                    guard path.count + relative.count <= 4 else { continue }
                    let overlaps = modelEntries.contains { e in e.0.starts(with: relative) || relative.starts(with: e.0) }
                    if overlaps { continue }
                    let value = random.value(depth: 4 - path.count - relative.count)
                    entries[relative.joined(separator: "/")] = value
                    modelEntries.append((relative, value))
                }
                try ref.queueUpdateChildValues(entries.mapValues { $0 as Any })
                // Values, then removals: a node keeps its priority iff it is not empty afterwards.
                for (relative, value) in modelEntries where ModelNode.from(value) != nil {
                    model.set(ModelNode.from(value), at: path + relative)
                }
                for (relative, value) in modelEntries where ModelNode.from(value) == nil { model.set(nil, at: path + relative) }
                description = "update /\(path.joined(separator: "/")) \(JSONValue.object(entries).jsonString())"
            default:
                let priority = random.priority()
                ref.setPriority(priority.anyValue) { _, _ in }
                if let node = model.node(at: path) {
                    model.set(node.withPriority(priority == JSONValue.null ? Optional<JSONValue>.none : priority), at: path)
                }
                description = "setPriority /\(path.joined(separator: "/")) \(priority.jsonString())"
            }
            try settle()
            let expected = oracle.events(written: path, old: old, new: model)
            let actual = log.take()
            #expect(actual == expected, "step \(step): \(description)")
            if actual != expected { return }
        }
        // The final state agrees too.
        var final: JSONValue = .null
        db.reference().getData { _, snapshot in final = snapshot?.exportJSON ?? .null }
        try settle()
        #expect(final == (model.root?.export ?? .null))
    }
}
