import Canopy
import Foundation
import Testing

/// The aggregate API around the engine: AsyncSequences, removal, errors, closing.
@Suite("Aggregate API")
final class AggregateAPITests: ManualDatabaseSuite {
    final class Box: @unchecked Sendable {  // written on the draining thread only
        var values: [AggregateSnapshot] = []
        var errors: [any Error] = []
    }

    @Test("values() yields the current value, then each change; ending the loop removes the observer")
    func asyncSequence() async throws {
        let db = try Database.inMemory()
        defer { db.close() }
        let ratings = db.reference(withPath: "ratings")
        try await ratings.setValue(["a": ["stars": 4], "b": ["stars": 2]])
        let aggregate = ratings.aggregate(.count, .average("stars"))
        var iterator = aggregate.values().makeAsyncIterator()
        let first = try #require(try await iterator.next())
        #expect(first.count == 2 && first.average("stars") == 3)
        try await ratings.child("c").setValue(["stars": 6])
        let second = try #require(try await iterator.next())
        #expect(second.count == 3 && second.average("stars") == 4)
        #expect(second.json == ["count": 3, "avg(stars)": 4.0])
        // A write that does not change the value yields nothing: the next value is the one after.
        try await ratings.child("c/text").setValue("ok")
        try await ratings.child("a").removeValue()
        let third = try #require(try await iterator.next())
        #expect(third.count == 2 && third.average("stars") == 4)
        db.close()
        await #expect(throws: DatabaseError.self) { _ = try await iterator.next() }
    }

    @Test("min and max are integers when integer-valued, and a change of form alone (3.0 for 3) calls no observer")
    func canonicalMinMax() throws {
        let list = db.reference(withPath: "list")
        try list.queueSetValue(["b": 3.0, "c": 7.0, "d": 5])
        let aggregate = list.aggregate(.min("$value"), .max("$value"))
        let seen = Box()
        aggregate.observe { seen.values.append($0) }
        db.drain()
        let first = try #require(seen.values.first)
        guard case .int(3)? = first[.min("$value")], case .int(7)? = first[.max("$value")] else {
            Issue.record("not integers: \(first.json)")
            return
        }
        // One write that leaves the same numbers, the minimum now an integer's: no call.
        try list.queueUpdateChildValues(["b": NSNull(), "a": 3])
        db.drain()
        #expect(seen.values.count == 1, "called again for \(seen.values.dropFirst().map(\.json))")
        try list.child("g").queueSetValue(2.5)
        db.drain()
        #expect(seen.values.count == 2)
        guard case .double(2.5)? = seen.values.last?[.min("$value")] else {
            Issue.record("min \(String(describing: seen.values.last?.json))")
            return
        }
    }

    /// Each value's form: `int 3`, `double 3.0` or `null` (JSONValue's `==` compares numbers by value).
    static func forms(_ snapshot: AggregateSnapshot?) -> [String] {
        guard let snapshot else { return [] }
        return snapshot.functions.map { function in
            switch snapshot[function] {
            case .int(let i)?: return "int \(i)"
            case .double(let d)?: return "double \(d)"
            default: return "null"
            }
        }
    }

    /// Observes min, max and sum of the values at `ref` (3, 3.0 and 7 at a, b and c), expects the
    /// first call to give the integers 3 and 7 and the double 13.0, then removes b and adds f: 3,
    /// which changes no value: expects no second call. Returns the aggregate and what its observer saw.
    static func observeMinMaxSumAcrossBReplacedByF(
        _ ref: DatabaseReference, _ db: Database, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (AggregateQuery, Box) {
        let aggregate = ref.aggregate(.min("$value"), .max("$value"), .sum("$value"))
        let seen = Box()
        aggregate.observe { seen.values.append($0) }
        db.drain()
        #expect(seen.values.map(Self.forms) == [["int 3", "int 7", "double 13.0"]], sourceLocation: sourceLocation)
        try ref.queueUpdateChildValues(["b": NSNull(), "f": 3])
        db.drain()
        #expect(seen.values.count == 1, "called again for \(seen.values.dropFirst().map(Self.forms))", sourceLocation: sourceLocation)
        return (aggregate, seen)
    }

    @Test("{a: 3, b: 3.0, c: 7}: min 3 and max 7 are integers; removing b and adding f: 3 changes no value and calls no observer")
    func minMaxFormDoesNotDependOnHistory() throws {
        // As the issue wrote it: Swift makes this literal a [String: Double] (3.0, 3.0, 7.0).
        let list = db.reference(withPath: "list")
        try list.queueSetValue(["a": 3, "b": 3.0, "c": 7])
        _ = try Self.observeMinMaxSumAcrossBReplacedByF(list, db)

        // With integers and a double: the minimum is an integer whichever of 3 and 3.0 it came
        // from, and in whichever order the data was written.
        let mixed = db.reference(withPath: "mixed")
        try mixed.queueSetValue(JSONValue.object(["a": .int(3), "b": .double(3.0), "c": .int(7)]))
        let (live, mixedSeen) = try Self.observeMinMaxSumAcrossBReplacedByF(mixed, db)
        // Read now, the value has the form the data gives it: no double left, an integer sum.
        var read: AggregateSnapshot?
        live.getData { _, snapshot in read = snapshot }
        db.drain()
        #expect(Self.forms(read) == ["int 3", "int 7", "int 13"])
        // With only 3.0 left at the bottom, the minimum is still the integer 3 (the sum changed).
        try mixed.queueUpdateChildValues(["a": NSNull(), "f": NSNull(), "b": 3.0])
        db.drain()
        #expect(mixedSeen.values.dropFirst().map(Self.forms) == [["int 3", "int 7", "double 10.0"]])
        // A double that is not integer-valued stays a double; an integer-valued one is an integer.
        try mixed.child("g").queueSetValue(2.5)
        try mixed.child("h").queueSetValue(9.0)
        db.drain()
        #expect(Self.forms(mixedSeen.values.last) == ["double 2.5", "int 9", "double 21.5"])
    }

    @Test("a removed observer gets nothing more; another observer of the same aggregate goes on")
    func removal() throws {
        let list = db.reference(withPath: "list")
        try list.queueSetValue(["a": 1, "b": 2])
        let aggregate = list.aggregate(.sum("$value"))
        let kept = Box()
        let removed = Box()
        aggregate.observe { kept.values.append($0) }
        let handle = aggregate.observe { removed.values.append($0) }
        db.drain()
        #expect(kept.values.map { $0.integerSum("$value") } == [3])
        #expect(removed.values.map { $0.integerSum("$value") } == [3])
        aggregate.removeObserver(withHandle: handle)
        try list.child("c").queueSetValue(4)
        db.drain()
        #expect(kept.values.map { $0.integerSum("$value") } == [3, 7])
        #expect(removed.values.count == 1)
        // Removing an unknown handle is harmless.
        aggregate.removeObserver(withHandle: 987_654)
    }

    @Test("an invalid field or query is reported to getData and to the cancel block, naming the part")
    func errors() async throws {
        let db = try Database.inMemory()
        defer { db.close() }
        let ref = db.reference(withPath: "list")
        for (aggregate, part) in [
            (ref.aggregate(.sum("a.b")), "sum(a.b)"), (ref.aggregate(.max("$key")), "max($key)"), (ref.aggregate([]), "at least one"),
            (ref.queryLimited(toFirst: 0).aggregate(.count), "Limit"),
        ] {
            do {
                _ = try await aggregate.getData()
                Issue.record("\(part): no error")
            } catch let error as DatabaseError {
                #expect(error.code == .invalidQuery, "\(part)")
                #expect(error.message.contains(part), "\(error.message)")
            }
            let cancelled = await withCheckedContinuation { (continuation: CheckedContinuation<(any Error)?, Never>) in
                aggregate.observe(with: { _ in continuation.resume(returning: nil) }, withCancel: { continuation.resume(returning: $0) })
            }
            #expect((cancelled as? DatabaseError)?.code == .invalidQuery, "\(part)")
        }
    }

    @Test("a snapshot's accessors: integer sums exact, doubles as doubles, nil for what was not asked")
    func accessors() throws {
        let list = db.reference(withPath: "list")
        try list.queueSetValue(["a": ["n": Int64.max - 1, "d": 0.5], "b": ["n": 1, "d": 0.25], "c": ["n": "x"]])
        var snapshot: AggregateSnapshot?
        list.aggregate(.sum("n"), .sum("d"), .min("n"), .count, .sum("n")).getData { _, s in snapshot = s }
        db.drain()
        let s = try #require(snapshot)
        #expect(s.functions == [.sum("n"), .sum("d"), .min("n"), .count])
        #expect(s.integerSum("n") == Int64.max)
        #expect(s.sum("d") == 0.75 && s.integerSum("d") == nil)
        #expect(s[.min("n")] == .int(1))
        #expect(s.count == 3 && s[.count] == .int(3))
        #expect(s.average("n") == nil && s[.max("n")] == nil)
        #expect(s.description == #"{"count":3,"min(n)":1,"sum(d)":0.75,"sum(n)":9223372036854775807}"#)
    }
}
