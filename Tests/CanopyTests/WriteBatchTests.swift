import Canopy
import CanopyCore
import CanopyStorage
import CanopyTestSupport
import Foundation
import Testing

/// `Database.batch()`: writes to any locations committed as one write.
@Suite("Write batches")
struct WriteBatchTests {
    static func commit(_ db: Database, _ batch: WriteBatch) -> (any Error)?? {
        var outcome: (any Error)??
        batch.commit { outcome = .some($0) }
        db.drain()
        return outcome
    }

    @Test("a batch commits every write at once; observers above see one event")
    func commits() throws {
        let db = try manualDatabase(clock: 1_700_000_000_000)
        defer { db.close() }
        try db.reference(withPath: "drafts/p1").queueSetValue("draft")
        var events: [JSONValue] = []
        db.reference().observe(.value) { events.append($0.json) }
        db.drain()
        let post: JSONValue = ["title": "Hi", "uid": "ada"]
        let batch = db.batch()
        try batch.setValue(post, for: db.reference(withPath: "posts/p1"))
            .setValue(post, for: db.reference(withPath: "user-posts/ada/p1"))
            .updateChildValues(["postCount": 1, "last/title": "Hi"], for: db.reference(withPath: "users/ada"))
            .removeValue(for: db.reference(withPath: "drafts/p1"))
        let outcome = Self.commit(db, batch)
        #expect(outcome != nil && outcome! == nil)
        let expected: JSONValue = [
            "posts": ["p1": post], "user-posts": ["ada": ["p1": post]], "users": ["ada": ["postCount": 1, "last": ["title": "Hi"]]],
        ]
        #expect(events == [["drafts": ["p1": "draft"]], expected])
    }

    @Test("an invalid write throws and is not added; a batch commits once; an empty one succeeds with no event")
    func misuse() throws {
        let db = try manualDatabase(clock: 1_700_000_000_000)
        let other = try manualDatabase(clock: 1_700_000_000_000)
        defer {
            db.close()
            other.close()
        }
        var events = 0
        db.reference().observe(.value) { _ in events += 1 }
        db.drain()
        let empty = db.batch()
        #expect(Self.commit(db, empty)! == nil)
        #expect(events == 1)
        let batch = db.batch()
        try batch.setValue(1, for: db.reference(withPath: "ok"))
        #expect(throws: DatabaseError.self) { try batch.setValue(["a/b": 1], for: db.reference(withPath: "bad")) }
        #expect(throws: DatabaseError.self) { try batch.updateChildValues(["a": 1, "a/b": 2], for: db.reference(withPath: "bad")) }
        #expect(throws: DatabaseError.self) { try batch.removeValue(for: other.reference(withPath: "x")) }
        #expect(Self.commit(db, batch)! == nil)
        #expect(db.reference().blockingValue(db) == ["ok": 1])
        let again = Self.commit(db, batch)
        #expect((again! as? DatabaseError)?.code == .invalidOperation)
        #expect(throws: DatabaseError.self) { try batch.setValue(2, for: db.reference(withPath: "ok")) }
        #expect(events == 2)
    }

    @Test("a committed batch survives reopening: it is one journal record")
    func durable() async throws {
        let directory = TemporaryDirectory("batch")
        do {
            let db = try Database(path: directory.path)
            let batch = db.batch()
            for i in 0..<50 { try batch.setValue(["n": i], for: db.reference(withPath: "items/i\(i)")) }
            try batch.updateChildValues(["count": 50], for: db.reference(withPath: "meta"))
            try await batch.commit()
            db.close()
        }
        // The journal holds one record for the whole batch.
        var records: [WriteOperation] = []
        for segment in JournalFormat.storeFiles(in: directory.names).segments {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.file(segment.name)))
            _ = try bytes.withUnsafeBytes { buffer throws(DatabaseError) in
                try JournalReader.scan(buffer, fileName: segment.name) { _, _, write throws(DatabaseError) in records.append(write) }
            }
        }
        #expect(records.count == 1)
        #expect(records.first?.entries.count == 51)
        let reopened = try Database(path: directory.path)
        defer { reopened.close() }
        let root = try await reopened.reference().getData()
        #expect(root.childSnapshot(forPath: "items").childrenCount == 50)
        #expect(root.childSnapshot(forPath: "meta/count").value as? Int == 50)
        #expect(root.childSnapshot(forPath: "items/i49/n").value as? Int == 49)
    }

    /// One random write: applied to a batch, or made on its own.
    enum Op {
        case set([String], JSONValue)
        case increment([String], Int)
        case update([String], [String: JSONValue])
        case remove([String])

        func add(to batch: WriteBatch, _ db: Database) throws {
            switch self {
            case .set(let path, let value): try batch.setValue(value, for: db.reference(withPath: path.joined(separator: "/")))
            case .increment(let path, let by):
                try batch.setValue(ServerValue.increment(NSNumber(value: by)), for: db.reference(withPath: path.joined(separator: "/")))
            case .update(let path, let values):
                try batch.updateChildValues(values, for: db.reference(withPath: path.joined(separator: "/")))
            case .remove(let path): try batch.removeValue(for: db.reference(withPath: path.joined(separator: "/")))
            }
        }

        func apply(to db: Database) throws {
            switch self {
            case .set(let path, let value): try db.reference(withPath: path.joined(separator: "/")).queueSetValue(value)
            case .increment(let path, let by):
                try db.reference(withPath: path.joined(separator: "/")).queueSetValue(ServerValue.increment(NSNumber(value: by)))
            case .update(let path, let values): try db.reference(withPath: path.joined(separator: "/")).queueUpdateChildValues(values)
            case .remove(let path): try db.reference(withPath: path.joined(separator: "/")).queueRemoveValue()
            }
        }

        static func random(using random: inout SeededGenerator) -> Op {
            let keys = ["a", "b", "c"]
            func path(_ depth: ClosedRange<Int>) -> [String] {
                (0..<Int.random(in: depth, using: &random)).map { _ in keys.randomElement(using: &random)! }
            }
            func value() -> JSONValue {
                switch Int.random(in: 0..<4, using: &random) {
                case 0:
                    return .object([
                        "a": .int(Int64.random(in: 0..<9, using: &random)), "c": ["b": .int(Int64.random(in: 0..<9, using: &random))],
                    ])
                case 1: return .null
                default: return .int(Int64.random(in: 0..<9, using: &random))
                }
            }
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4: return .set(path(1...3), value())
            case 4..<6: return .increment(path(1...3), Int.random(in: 1..<5, using: &random))
            case 6..<8:
                var values: [String: JSONValue] = [:]
                for key in keys.shuffled(using: &random).prefix(Int.random(in: 1...3, using: &random)) {
                    let deeper = Bool.random(using: &random) ? "/" + keys.randomElement(using: &random)! : ""
                    values[key + deeper] = value()
                }
                return .update(path(0...2), values)
            default: return .remove(path(1...3))
            }
        }
    }

    @Test(
        "random batches leave what the same writes made one by one leave; each observer sees a batch whole or not at all", arguments: 1...10
    )
    func oracle(seed: UInt64) throws {
        let batched = try manualDatabase(clock: 1_700_000_000_000)
        let sequential = try manualDatabase(clock: 1_700_000_000_000)
        defer {
            batched.close()
            sequential.close()
        }
        var random = SeededGenerator(seed: seed)
        let keys = ["a", "b", "c"]
        let locations = [[]] + keys.map { [$0] } + keys.flatMap { k in keys.map { [k, $0] } }
        var seen: [[JSONValue]] = Array(repeating: [], count: locations.count)
        for (i, location) in locations.enumerated() {
            batched.reference(withPath: location.joined(separator: "/")).observe(.value) { seen[i].append($0.json) }
        }
        batched.drain()
        var last = seen.map { $0.last ?? .null }
        for i in seen.indices { seen[i] = [] }
        for round in 0..<160 {
            let ops = (0..<Int.random(in: 1...(round % 4 == 3 ? 16 : 6), using: &random)).map { _ in Op.random(using: &random) }
            let batch = batched.batch()
            for op in ops {
                try op.add(to: batch, batched)
                try op.apply(to: sequential)
            }
            let outcome = Self.commit(batched, batch)
            sequential.drain()
            #expect(outcome != nil && outcome! == nil)
            let expected = sequential.reference().blockingValue(sequential)
            #expect(batched.reference().blockingValue(batched) == expected, "round \(round): \(ops)")
            for (i, location) in locations.enumerated() {
                let now = sequential.reference(withPath: location.joined(separator: "/")).blockingValue(sequential)
                // One event with the final value where it changed, none where it did not.
                #expect(seen[i] == (now == last[i] ? [] : [now]), "round \(round) at /\(location.joined(separator: "/")): \(ops)")
                last[i] = now
                seen[i] = []
            }
        }
    }
}
