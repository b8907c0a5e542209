import CanopyCore
import CanopyTestSupport
import Foundation
import Testing

@testable import Canopy

/// The one-pass conversion of Foundation values and the multi-threaded conversion of large updates
/// must build the same data, and report the same errors, as the exact two-pass path.
@Suite("Fast write path: Foundation values and large updates")
struct FastWritePathTests {
    private func data(_ ref: DatabaseReference, _ db: Database) -> JSONValue {
        var data = JSONValue.null
        ref.getData { _, snapshot in data = snapshot?.exportJSON ?? .null }
        db.drain()
        return data
    }

    /// The exact path: `JSONValue(any:)` then `ValueConverter`.
    private func exact(_ value: Any?, at location: [ChildKey]) -> Result<WriteValue, DatabaseError> {
        Result { () throws(DatabaseError) in
            let json = try JSONValue(any: value, function: "set", argument: "value", location: location.map(\.string))
            var converter = try ValueConverter(function: "set", location: location.map(\.string))
            return try converter.convert(json)
        }
    }

    @Test("FastAnyConverter builds the exact path's node, or defers to it")
    func anyEqualsExact() {
        var rng = SeededGenerator(seed: 5)
        let keys = ["a", "b", "title", "0", "7", "-1", "x y", "é", ".sv", ".value", ".priority", "bad/key", "k#", ""]
        func value(_ depth: Int) -> Any? {
            switch Int(rng.next() % (depth > 3 ? 9 : 12)) {
            case 0: return nil
            case 1: return NSNull()
            case 2: return Bool(rng.next() % 2 == 0)
            case 3: return Int(rng.next() % 100) - 50
            case 4: return [1.5, -0.0, Double.nan, -Double.infinity][Int(rng.next() % 4)]
            case 5: return "s\(rng.next() % 10)"
            case 6: return Int64(rng.next() % 7)
            case 7: return [Float(1.5), UInt8(3), "sub" as Substring, JSONValue.int(4)][Int(rng.next() % 4)] as Any
            case 8: return JSONValue.object(["j": .string("v"), "n": .null])
            case 9: return (0..<Int(rng.next() % 4)).map { _ in value(depth + 1) as Any }
            default:
                var members: [String: Any] = [:]
                for _ in 0..<Int(rng.next() % 6) { members[keys[Int(rng.next() % UInt64(keys.count))]] = value(depth + 1) ?? NSNull() }
                return members
            }
        }
        var fastCount = 0
        for _ in 0..<3000 {
            let v = value(0)
            let location = [ChildKey("posts"), ChildKey("p1")]
            let expected = self.exact(v, at: location)
            var fast = FastAnyConverter(budget: PathBudget(location: location))
            if let node = try? fast.node(v) {
                fastCount += 1
                guard case .success(let write) = expected else {
                    Issue.record("the fast path accepted what the exact path rejects: \(String(describing: v))")
                    continue
                }
                #expect(write.placeholders.isEmpty && node == write.node)
            }
            // Through the builder (fast or exact), the outcome is the exact path's.
            let built = Result { () throws(DatabaseError) in try WriteBuilder.value(v, at: location, function: "set", argument: "value") }
            switch (built, expected) {
            case (.success(let a), .success(let b)): #expect(a.node == b.node && a.placeholders.count == b.placeholders.count)
            case (.failure(let a), .failure(let b)): #expect(a.code == b.code && a.message == b.message, "\(a.message) vs \(b.message)")
            default: Issue.record("WriteBuilder.value and the exact path disagree on \(String(describing: v))")
            }
        }
        #expect(fastCount > 500)
    }

    @Test("a large update (converted on several threads) equals the same children set one by one")
    func largeUpdate() throws {
        let n = BatchConverter.threshold * 2 + 3
        var values: [AnyHashable: Any] = [:]
        for i in 0..<n {
            let key = i % 7 == 0 ? String(i) : "k\(i)"
            values[key] = i % 11 == 0 ? NSNull() as Any : ["title": "t\(i)", "n": i, "tags": ["a", i % 2 == 0] as [Any]] as [String: Any]
        }
        let location = PathBudget(location: [ChildKey("list")])
        let entries = try #require(BatchConverter.entries(values, at: location))
        #expect(entries.count == n)

        let db = try manualDatabase()
        defer { db.close() }
        let bulk = db.reference(withPath: "bulk")
        let single = db.reference(withPath: "single")
        try bulk.queueSetValue(["k3": "old", "zz": 1])
        try single.queueSetValue(["k3": "old", "zz": 1])
        try bulk.queueUpdateChildValues(values)
        for (key, value) in values { try single.child(key as! String).queueSetValue(value) }
        db.drain()
        let expected = self.data(single, db)
        #expect(self.data(bulk, db) == expected)
        #expect(expected["zz"] == 1 && expected["k1"]?["n"] == 1)
    }

    @Test("a large update with one unusual entry is converted exactly, with the same errors")
    func largeUpdateFallback() throws {
        let n = BatchConverter.threshold + 10
        var values: [AnyHashable: Any] = [:]
        for i in 0..<n { values["k\(i)"] = i }
        var withServerValue = values
        withServerValue["stamp"] = ServerValue.timestamp()
        #expect(BatchConverter.entries(withServerValue, at: PathBudget(location: [])) == nil)
        var withNested = values
        withNested["k5/deep"] = 1
        #expect(BatchConverter.entries(withNested, at: PathBudget(location: [])) == nil)

        let db = try manualDatabase()
        defer { db.close() }
        let ref = db.reference(withPath: "big")
        try ref.queueUpdateChildValues(withServerValue)
        db.drain()
        let stored = self.data(ref, db)
        #expect(stored["k17"] == 17)
        if case .int(let stamp)? = stored["stamp"] { #expect(stamp > 0) } else { Issue.record("no timestamp") }

        // Overlap and invalid keys: the same messages as a small update.
        var overlapping = values
        overlapping["k5/deep"] = 1
        let bigError = #expect(throws: DatabaseError.self) { try ref.queueUpdateChildValues(overlapping) }
        let smallError = #expect(throws: DatabaseError.self) { try ref.queueUpdateChildValues(["k5": 5, "k5/deep": 1]) }
        #expect(bigError?.message == smallError?.message)
        var invalid = values
        invalid["bad#key"] = 1
        let invalidError = #expect(throws: DatabaseError.self) { try ref.queueUpdateChildValues(invalid) }
        #expect(invalidError?.message.contains("contains an invalid key (bad#key)") == true)
        var nan = values
        nan["k9"] = Double.nan
        let nanError = #expect(throws: DatabaseError.self) { try ref.queueUpdateChildValues(nan) }
        #expect(nanError?.message == "update failed: values argument contains NaN at /big/k9")
    }
}
