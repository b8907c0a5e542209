import Canopy
import CanopyTestSupport
import Foundation
import Testing

/// Triggers: `onValueWritten/Created/Updated/Deleted` on path patterns.
@Suite("Triggers")
struct TriggerTests {
    struct Fired: Equatable, CustomStringConvertible {
        var kind: String
        var path: String
        var before: JSONValue
        var after: JSONValue
        var params: [String: String]
        var description: String { "\(kind) \(path) \(before) -> \(after) \(params)" }
    }

    @Test("created, updated, deleted and written fire for their kind of change, with before, after and params")
    func kinds() throws {
        let db = try manualDatabase()
        defer { db.close() }
        var fired: [Fired] = []
        let pattern = "/rooms/{roomId}/members/{uid}"
        func record(_ kind: String) -> (TriggerEvent) -> Void {
            { event in
                fired.append(
                    Fired(kind: kind, path: event.ref.pathString, before: event.before.json, after: event.after.json, params: event.params))
            }
        }
        try db.onValueWritten(pattern, record("written"))
        try db.onValueCreated(pattern, record("created"))
        try db.onValueUpdated(pattern, record("updated"))
        try db.onValueDeleted(pattern, record("deleted"))
        let member = db.reference(withPath: "rooms/r1/members/ada")
        try member.queueSetValue(["role": "owner"])
        try member.child("role").queueSetValue("guest")
        try member.child("role").queueSetValue("guest")  // no change: nothing fires
        try member.queueRemoveValue()
        try db.reference(withPath: "rooms/r1/name").queueSetValue("elsewhere")  // not a member
        db.drain()
        let params = ["roomId": "r1", "uid": "ada"]
        let path = "/rooms/r1/members/ada"
        #expect(
            fired == [
                Fired(kind: "written", path: path, before: .null, after: ["role": "owner"], params: params),
                Fired(kind: "created", path: path, before: .null, after: ["role": "owner"], params: params),
                Fired(kind: "written", path: path, before: ["role": "owner"], after: ["role": "guest"], params: params),
                Fired(kind: "updated", path: path, before: ["role": "owner"], after: ["role": "guest"], params: params),
                Fired(kind: "written", path: path, before: ["role": "guest"], after: .null, params: params),
                Fired(kind: "deleted", path: path, before: ["role": "guest"], after: .null, params: params),
            ])
    }

    @Test("a write above the pattern fires once per matching location it changed; a multi-path write below fires once")
    func aboveAndBelow() throws {
        let db = try manualDatabase()
        defer { db.close() }
        var members: [Fired] = []
        var rooms: [Fired] = []
        try db.onValueWritten("/rooms/{roomId}/members/{uid}") { event in
            members.append(
                Fired(
                    kind: "\(event.kind)", path: event.ref.pathString, before: event.before.json, after: event.after.json,
                    params: event.params))
        }
        try db.onValueWritten("/rooms/{roomId}") { event in
            rooms.append(
                Fired(
                    kind: "\(event.kind)", path: event.ref.pathString, before: event.before.json, after: event.after.json,
                    params: event.params))
        }
        try db.reference(withPath: "rooms/r1/members").queueSetValue(["a": 1, "c": 3])
        db.drain()
        members = []
        rooms = []
        try db.reference(withPath: "rooms").queueSetValue(["r1": ["members": ["a": 1, "b": 2]]])
        db.drain()
        #expect(
            members == [
                Fired(kind: "created", path: "/rooms/r1/members/b", before: .null, after: 2, params: ["roomId": "r1", "uid": "b"]),
                Fired(kind: "deleted", path: "/rooms/r1/members/c", before: 3, after: .null, params: ["roomId": "r1", "uid": "c"]),
            ])
        #expect(rooms.count == 1 && rooms.first?.after == ["members": ["a": 1, "b": 2]])
        rooms = []
        try db.reference(withPath: "rooms/r1").queueUpdateChildValues(["members/d": 4, "topic": "x", "members/a": 1])
        db.drain()
        #expect(rooms.map(\.path) == ["/rooms/r1"])
        #expect(members.map(\.path).suffix(1) == ["/rooms/r1/members/d"])
    }

    @Test("triggers run in write order, see the data as of their write, and their writes apply before the next write")
    func orderAndData() throws {
        let db = try manualDatabase()
        defer { db.close() }
        var order: [String] = []
        db.reference(withPath: "in").observe(.childAdded) { order.append("in/\($0.key!)") }
        db.reference(withPath: "out").observe(.childAdded) { order.append("out/\($0.key!)") }
        var afters: [JSONValue] = []
        try db.onValueCreated("/in/{id}") { event in
            afters.append(event.after.json)
            order.append("trigger/\(event.params["id"]!)")
            let value = event.after.value as? Int ?? 0
            try db.reference(withPath: "out/\(event.params["id"]!)").queueSetValue(value * 10)
        }
        db.drain()
        // All three writes are queued before any runs: each trigger still sees its own write's data.
        for i in 1...3 { try db.reference(withPath: "in/k\(i)").queueSetValue(i) }
        try db.reference(withPath: "in/k1").queueSetValue(100)
        db.drain()
        #expect(afters == [1, 2, 3])
        #expect(order == ["in/k1", "trigger/k1", "out/k1", "in/k2", "trigger/k2", "out/k2", "in/k3", "trigger/k3", "out/k3"])
        #expect(db.reference().blockingValue(db) == ["in": ["k1": 100, "k2": 2, "k3": 3], "out": ["k1": 10, "k2": 20, "k3": 30]])
    }

    @Test("a chain of trigger writes stops at maxTriggerDepth with a triggerDepthExceeded error", arguments: [3, 16])
    func depthLimit(maxDepth: Int) throws {
        let db = try manualDatabase(maxTriggerDepth: maxDepth == 16 ? nil : maxDepth)
        defer { db.close() }
        var errors: [DatabaseError] = []
        db.onTriggerError { errors.append($0) }
        var depths: [Int] = []
        try db.onValueCreated("/chain/{n}") { event in
            depths.append(event.depth)
            let next = Int(event.params["n"]!.dropFirst())! + 1
            try db.reference(withPath: "chain/n\(next)").queueSetValue(next)
        }
        try db.reference(withPath: "chain/n0").queueSetValue(0)
        db.drain()
        #expect(depths == Array(0...maxDepth))
        let chain = db.reference(withPath: "chain").blockingValue(db)
        #expect(chain == .object(Dictionary(uniqueKeysWithValues: (0...maxDepth).map { ("n\($0)", JSONValue.int(Int64($0))) })))
        #expect(errors.map(\.code) == [.triggerDepthExceeded])
        #expect(errors.first?.message.contains("/chain/n\(maxDepth + 1)") == true)
        #expect(errors.first?.message.contains("\(maxDepth)") == true)
    }

    @Test("a trigger that re-fires itself is stopped too; its refused write's completion gets the error")
    func selfLoop() throws {
        let db = try manualDatabase(maxTriggerDepth: 4)
        defer { db.close() }
        var errors: [DatabaseError.Code] = []
        db.onTriggerError { errors.append($0.code) }
        var completions: [DatabaseError.Code?] = []
        try db.onValueWritten("/counter") { event in
            db.reference(withPath: "counter").setValue((event.after.value as? Int ?? 0) + 1) { error, _ in
                completions.append((error as? DatabaseError)?.code)
            }
        }
        try db.reference(withPath: "counter").queueSetValue(0)
        db.drain()
        #expect(db.reference(withPath: "counter").blockingValue(db) == 4)
        #expect(completions == [nil, nil, nil, nil, .triggerDepthExceeded])
        #expect(errors == [.triggerDepthExceeded])
    }

    @Test("a throwing trigger reports to onTriggerError; the write stands and other triggers still run")
    func throwingTrigger() throws {
        let db = try manualDatabase()
        defer { db.close() }
        struct Broken: Error {}
        var errors: [DatabaseError] = []
        db.onTriggerError { errors.append($0) }
        try db.onValueWritten("/a/{x}") { _ in throw Broken() }
        var ran = 0
        try db.onValueWritten("/a/{x}") { _ in ran += 1 }
        try db.reference(withPath: "a/b").queueSetValue(1)
        db.drain()
        #expect(ran == 1)
        #expect(errors.map(\.code) == [.userCodeFailed])
        #expect(errors.first?.message.contains("/a/{x}") == true)
        #expect(errors.first?.message.contains("/a/b") == true)
        #expect(db.reference(withPath: "a/b").blockingValue(db) == 1)
    }

    @Test("remove() stops a trigger at once, even inside the write that fires it")
    func removal() throws {
        let db = try manualDatabase()
        defer { db.close() }
        var fired: [String] = []
        var registration: TriggerRegistration?
        registration = try db.onValueWritten("/a/{x}") { event in
            fired.append(event.params["x"]!)
            registration?.remove()
        }
        #expect(registration?.pattern == "/a/{x}")
        try db.reference(withPath: "a").queueSetValue(["p": 1, "q": 2])
        try db.reference(withPath: "a/r").queueSetValue(3)
        db.drain()
        #expect(fired == ["p"])
    }

    @Test("invalid patterns are refused with invalidPath naming the problem")
    func invalidPatterns() throws {
        let db = try manualDatabase()
        defer { db.close() }
        for pattern in ["a/{", "a/{b}/{b}", "a/b.c", "a/{x-y}", "a/{}", "a/b}"] {
            do throws(DatabaseError) {
                try db.onValueWritten(pattern) { _ in }
                Issue.record("\(pattern) was accepted")
            } catch {
                #expect(error.code == .invalidPath)
                #expect(error.message.contains(pattern))
            }
        }
    }

    @Test("random writes fire exactly the changed matching locations with the right before and after", arguments: 1...5)
    func oracle(seed: UInt64) throws {
        let db = try manualDatabase()
        defer { db.close() }
        var random = SeededGenerator(seed: seed)
        var fired: [Fired] = []
        try db.onValueWritten("/t/{a}/{b}") { event in
            fired.append(
                Fired(kind: "", path: event.ref.pathString, before: event.before.json, after: event.after.json, params: event.params))
        }
        let keys = ["x", "y", "z"]
        for round in 0..<200 {
            let before = db.reference(withPath: "t").blockingValue(db)
            let depth = Int.random(in: 0...3, using: &random)
            let path = ["t"] + (0..<depth).map { _ in keys.randomElement(using: &random)! }
            let value: JSONValue =
                Int.random(in: 0..<4, using: &random) == 0
                ? .null
                : Bool.random(using: &random)
                    ? .int(Int64.random(in: 0..<3, using: &random)) : ["x": ["y": .int(Int64.random(in: 0..<3, using: &random))]]
            if Bool.random(using: &random) {
                try db.reference(withPath: path.joined(separator: "/")).queueSetValue(value)
            } else {
                var values: [String: JSONValue] = ["z": value]
                values[path.last!] = value
                try db.reference(withPath: path.dropLast().joined(separator: "/")).queueUpdateChildValues(values)
            }
            db.drain()
            let after = db.reference(withPath: "t").blockingValue(db)
            // The oracle: every /t/a/b whose value differs, in key order.
            var expected: [Fired] = []
            for a in keys {
                for b in keys {
                    let old = Self.child(before, [a, b])
                    let new = Self.child(after, [a, b])
                    if old != new {
                        expected.append(Fired(kind: "", path: "/t/\(a)/\(b)", before: old, after: new, params: ["a": a, "b": b]))
                    }
                }
            }
            #expect(fired.sorted { $0.path < $1.path } == expected, "round \(round): \(path) = \(value)")
            fired = []
        }
    }

    static func child(_ value: JSONValue, _ path: [String]) -> JSONValue {
        guard let first = path.first else { return value }
        guard case .object(let o) = value, let next = o[first] else { return .null }
        return child(next, Array(path.dropFirst()))
    }

    @Test("8 threads writing while a trigger keeps a transaction-maintained count and sum: exact")
    func concurrentAggregate() throws {
        let db = try Database.inMemory()
        defer { db.close() }
        let failures = Locked(0)
        db.onTriggerError { _ in failures.withLock { $0 += 1 } }
        let stats = db.reference(withPath: "stats")
        try db.onValueCreated("/items/{id}") { event in
            let value = event.after.value as? Int ?? 0
            db.runTransaction(
                { transaction in
                    let current = try transaction.getData(stats)
                    try transaction.setValue(
                        [
                            "count": (current.childSnapshot(forPath: "count").value as? Int ?? 0) + 1,
                            "sum": (current.childSnapshot(forPath: "sum").value as? Int ?? 0) + value,
                        ], for: stats)
                }, completion: { _ in })
        }
        let threads = 8
        let perThread = 250
        let done = DispatchGroup()
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for i in 0..<perThread {
                done.enter()
                db.reference(withPath: "items/t\(thread)-\(i)").setValue(i % 7) { _, _ in done.leave() }
            }
        }
        try done.wait(for: "the writes")
        let final = try blockingRead(db.reference())
        #expect(final.childSnapshot(forPath: "items").childrenCount == UInt(threads * perThread))
        #expect(final.childSnapshot(forPath: "stats/count").value as? Int == threads * perThread)
        #expect(final.childSnapshot(forPath: "stats/sum").value as? Int == threads * (0..<perThread).reduce(0) { $0 + $1 % 7 })
        #expect(failures.value == 0)
    }
}
