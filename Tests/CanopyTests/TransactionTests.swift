import Canopy
import CanopyTestSupport
import Foundation
import Testing

@Suite("Transactions")
final class TransactionTests: ManualDatabaseSuite {
    /// Runs a transaction in drain mode and returns its completion.
    private func run(_ db: Database, _ ref: DatabaseReference, _ block: @escaping (MutableData) -> TransactionResult) -> (
        error: (any Error)?, committed: Bool, snapshot: DataSnapshot?
    ) {
        var outcome: ((any Error)?, Bool, DataSnapshot?)? = nil
        ref.runTransactionBlock(block) { error, committed, snapshot in outcome = (error, committed, snapshot) }
        db.drain()
        return outcome ?? (DatabaseError(.closed, "no completion"), false, nil)
    }

    @Test("the new value is visible at once and the completion reports it committed")
    func commits() throws {
        let n = db.reference(withPath: "n")
        try n.queueSetValue(5)
        var values: [JSONValue] = []
        n.observe(.value) { values.append($0.json) }
        db.drain()
        var seen: JSONValue = .null
        let result = self.run(db, n) { data in
            seen = data.json
            data.value = (data.value as? Int ?? 0) + 1
            return .success(withValue: data)
        }
        #expect(seen == 5)
        #expect(result.error == nil)
        #expect(result.committed)
        #expect(result.snapshot?.json == 6)
        #expect(values == [5, 6])
    }

    @Test("an aborted transaction changes nothing, raises nothing and reports the current data")
    func aborts() throws {
        let n = db.reference(withPath: "n")
        var events = 0
        n.observe(.value) { _ in events += 1 }
        db.drain()
        let empty = self.run(db, n) { _ in .abort() }
        #expect(empty.error == nil && !empty.committed && empty.snapshot?.exists() == false)
        try n.queueSetValue(6)
        db.drain()
        let result = self.run(db, n) { data in
            data.value = 100
            return .abort()
        }
        #expect(!result.committed && result.snapshot?.json == 6)
        #expect(events == 2)  // initial null, then 6; nothing for the aborted transactions
    }

    @Test("a transaction on a missing location sees null; returning the current value raises nothing")
    func nilStartAndNoOp() throws {
        let ref = db.reference(withPath: "missing/child")
        var sawNull = false
        _ = self.run(db, ref) { data in
            sawNull = data.value is NSNull && !data.hasChildren() && data.childrenCount == 0
            return .abort()
        }
        #expect(sawNull)
        try ref.queueSetValue(["a": 1])
        var events = 0
        ref.observe(.value) { _ in events += 1 }
        db.drain()
        let result = self.run(db, ref) { .success(withValue: $0) }
        #expect(result.committed)
        #expect(events == 1)
    }

    @Test("transactions on one location run in order, each on the previous output")
    func sequential() throws {
        let ref = db.reference(withPath: "x")
        var secondSaw: JSONValue = .null
        ref.runTransactionBlock(
            { data in
                data.value = 42
                return .success(withValue: data)
            }, andCompletionBlock: nil)
        ref.runTransactionBlock(
            { data in
                secondSaw = data.json
                data.value = (data.value as? Int ?? 0) * 2
                return .success(withValue: data)
            }, andCompletionBlock: nil)
        db.drain()
        var final: JSONValue = .null
        ref.getData { _, s in final = s?.json ?? .null }
        db.drain()
        #expect(secondSaw == 42)
        #expect(final == 84)
    }

    @Test("as on iOS, setting the value clears the priority; an explicit priority is kept")
    func priorities() throws {
        let ref = db.reference(withPath: "p")
        try ref.queueSetValue("test", andPriority: 5)
        db.drain()
        _ = self.run(db, ref) { data in
            data.value = "new value"
            return .success(withValue: data)
        }
        var export: JSONValue = .null
        ref.getData { _, s in export = s?.exportJSON ?? .null }
        db.drain()
        #expect(export == "new value")
        _ = self.run(db, ref) { data in
            data.value = 42
            data.priority = 7
            return .success(withValue: data)
        }
        ref.getData { _, s in export = s?.exportJSON ?? .null }
        db.drain()
        #expect(export == [".value": 42, ".priority": 7])
    }

    @Test("the value events of sequential transactions carry their priorities")
    func priorityEvents() throws {
        let ref = db.reference(withPath: "q")
        var events: [JSONValue] = []
        ref.observe(.value) { events.append($0.exportJSON) }
        db.drain()
        _ = self.run(db, ref) { data in
            data.value = 5
            data.priority = 5
            return .success(withValue: data)
        }
        var input: JSONValue = .null
        _ = self.run(db, ref) { data in
            input = data.json
            data.value = 10
            data.priority = 10
            return .success(withValue: data)
        }
        #expect(input == 5)
        #expect(events == [.null, [".value": 5, ".priority": 5], [".value": 10, ".priority": 10]])
    }

    @Test("returning null commits a delete; a root transaction reads the whole tree")
    func deleteAndRoot() throws {
        let a = db.reference(withPath: "a")
        try a.queueSetValue(1)
        let deleted = self.run(db, a) { data in
            data.value = nil
            return .success(withValue: data)
        }
        #expect(deleted.committed && deleted.snapshot?.exists() == false)
        try a.queueSetValue(1)
        _ = self.run(db, a) { data in
            data.value = (data.value as? Int ?? 0) + 42
            return .success(withValue: data)
        }
        try db.reference(withPath: "b").queueSetValue(7)
        let root = self.run(db, db.reference()) { data in
            let value = data.value as? [String: Any] ?? [:]
            data.value = (value["a"] as? Int ?? 0) + (value["b"] as? Int ?? 0)
            return .success(withValue: data)
        }
        #expect(root.committed && root.snapshot?.json == 50)
    }

    @Test("MutableData navigation writes through, enumerates a snapshot of the children, and value clears priority")
    func mutableData() throws {
        var checks: [Bool] = []
        let result = self.run(db, db.reference(withPath: "m")) { data in
            checks.append(data.key == "m")
            data.value = ["a": 1, "b": 2]
            checks.append(data.hasChildren() && data.childrenCount == 2 && data.hasChild(atPath: "a"))
            data.childData(byAppendingPath: "b").value = 3
            checks.append((data.value as? [String: Any])?["b"] as? Int == 3)
            var visited = 0
            for child in data.children {
                let child = child as! MutableData
                visited += 1
                if child.key == "a" { data.childData(byAppendingPath: "c").value = ["d": 4] }
            }
            checks.append(visited == 2 && data.childrenCount == 3)
            let missing = data.childData(byAppendingPath: "x/y")
            checks.append(missing.value is NSNull && missing.key == "y")
            data.priority = "foo"
            checks.append(data.priority as? String == "foo")
            data.value = ["a": 1, "b": 3, "c": ["d": 4]]
            checks.append(data.priority is NSNull)
            data.childData(byAppendingPath: "a").priority = 4
            data.childData(byAppendingPath: "a").value = nil
            checks.append(!data.hasChild(atPath: "a"))
            return .success(withValue: data)
        }
        #expect(checks == Array(repeating: true, count: 8))
        #expect(result.snapshot?.json == ["b": 3, "c": ["d": 4]])
    }

    @Test("an invalid value set in the block fails the transaction with that error and writes nothing")
    func invalidValue() throws {
        let ref = db.reference(withPath: "v")
        try ref.queueSetValue(1)
        let result = self.run(db, ref) { data in
            data.value = ["a.b": 1]
            return .success(withValue: data)
        }
        #expect(!result.committed)
        #expect((result.error as? DatabaseError)?.code == .invalidKey)
        #expect(result.snapshot?.json == 1)
        let nan = self.run(db, ref) { data in
            data.value = Double.nan
            return .success(withValue: data)
        }
        #expect((nan.error as? DatabaseError)?.code == .invalidValue)
    }

    @Test("a set issued after a transaction overwrites it; a set issued before it is what it reads")
    func interactionWithSet() throws {
        let ref = db.reference(withPath: "s")
        var read: JSONValue = .null
        var committed = false
        ref.runTransactionBlock(
            { data in
                read = data.json
                data.value = "from transaction"
                return .success(withValue: data)
            }, andCompletionBlock: { _, c, _ in committed = c })
        try ref.queueSetValue("later set")
        db.drain()
        var final: JSONValue = .null
        ref.getData { _, s in final = s?.json ?? .null }
        db.drain()
        #expect(read == .null && committed && final == "later set")
        try ref.queueSetValue("earlier set")
        ref.runTransactionBlock(
            { data in
                read = data.json
                return .abort()
            }, andCompletionBlock: nil)
        db.drain()
        #expect(read == "earlier set")
    }
}
