import Canopy
import CanopyTestSupport
import Foundation
import Testing

@Suite("Large multi-path updates")
struct BulkUpdateTests {
    @Test(
        "an update with hundreds of sibling entries gives the same data and events as separate writes",
        arguments: [(1, true), (2, false), (3, false), (4, false)] as [(UInt64, Bool)])
    func bulkEqualsSequential(seed: UInt64, nested: Bool) throws {
        var rng = SeededGenerator(seed: seed)
        func int(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        var initial: [String: JSONValue] = [:]
        for i in 0..<300 where int(2) == 0 { initial["k\(i)"] = ["v": .int(Int64(i)), "w": .int(Int64(int(5)))] }
        initial[".priority"] = 7
        var entries: [String: JSONValue] = [:]
        for _ in 0..<250 {
            let key = "k\(int(400))"
            switch int(4) {
            case 0: entries[key] = .null
            case 1 where nested: entries[key + "/w"] = .int(Int64(int(9)))
            default: entries[key] = ["v": .int(Int64(int(1000)))]
            }
        }
        for key in entries.keys where key.hasSuffix("/w") && entries[String(key.dropLast(2))] != nil { entries[key] = nil }

        func run(bulk: Bool) throws -> (data: JSONValue, events: [String]) {
            let (db, list) = try manualDatabase(holding: JSONValue.object(initial), at: "list")
            defer { db.close() }
            var events: [String] = []
            for type in [DataEventType.childAdded, .childRemoved, .childChanged] {
                list.observe(
                    type,
                    andPreviousSiblingKeyWith: { snapshot, previous in
                        events.append("\(type) \(snapshot.key ?? "") \(previous ?? "-") \(snapshot.json.jsonString())")
                    })
            }
            list.observe(.value) { snapshot in events.append("value \(snapshot.exportJSON.jsonString())") }
            db.drain()
            events.removeAll()
            if bulk {
                try list.queueUpdateChildValues(entries.mapValues { $0 as Any })
            } else {
                // The same entries one at a time: values first, then removals.
                for (key, value) in entries where value != .null { try list.child(key).queueSetValue(value) }
                for (key, value) in entries where value == .null { try list.child(key).queueRemoveValue() }
            }
            db.drain()
            var data = JSONValue.null
            list.getData { _, snapshot in data = snapshot?.exportJSON ?? .null }
            db.drain()
            return (data, events)
        }
        let bulk = try run(bulk: true)
        let sequential = try run(bulk: false)
        #expect(bulk.data == sequential.data)
        #expect(bulk.data[".priority"] == 7)
        // One update raises one consolidated set of child events and one value event.
        #expect(bulk.events.filter { $0.hasPrefix("value") }.count == 1)
        let bulkChildEvents = Set(
            bulk.events.filter { !$0.hasPrefix("value") }.map { $0.split(separator: " ").prefix(2).joined(separator: " ") })
        let sequentialChildEvents = Set(
            sequential.events.filter { !$0.hasPrefix("value") }.map { $0.split(separator: " ").prefix(2).joined(separator: " ") })
        #expect(bulkChildEvents.isSubset(of: sequentialChildEvents))
        #expect(!bulkChildEvents.isEmpty)
    }

    @Test("a bulk update that empties a node removes it and its priority")
    func bulkRemovalEmpties() throws {
        let db = try manualDatabase()
        defer { db.close() }
        let list = db.reference(withPath: "list")
        var initial: [String: JSONValue] = [".priority": "p"]
        for i in 0..<100 { initial["c\(i)"] = .int(Int64(i)) }
        try list.queueSetValue(JSONValue.object(initial))
        var removal: [AnyHashable: Any] = [:]
        for i in 0..<100 { removal["c\(i)"] = NSNull() }
        try list.queueUpdateChildValues(removal)
        var exists = true
        list.getData { _, snapshot in exists = snapshot?.exists() ?? true }
        db.drain()
        #expect(!exists)
    }
}
