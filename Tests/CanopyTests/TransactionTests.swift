import Canopy
import CanopyTestSupport
import Foundation
import Testing

@Suite("Transactions")
struct TransactionTests {
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
        let db = try manualDatabase()
        defer { db.close() }
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
        let db = try manualDatabase()
        defer { db.close() }
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
        let db = try manualDatabase()
        defer { db.close() }
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
        let db = try manualDatabase()
        defer { db.close() }
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
        let db = try manualDatabase()
        defer { db.close() }
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
        let db = try manualDatabase()
        defer { db.close() }
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
        let db = try manualDatabase()
        defer { db.close() }
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
        let db = try manualDatabase()
        defer { db.close() }
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
        let db = try manualDatabase()
        defer { db.close() }
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

    @Test("an error thrown in the block reaches the caller and writes nothing")
    func thrownError() async throws {
        struct Oops: Error {}
        let db = try Database.inMemory()
        defer { db.close() }
        let ref = db.reference(withPath: "t")
        try await ref.setValue(1)
        await #expect(throws: DatabaseError.self) {
            try await ref.runTransaction { _ in throw Oops() }
        }
        #expect(try await ref.getData().json == 1)
        let (committed, snapshot) = try await ref.runTransaction { data in
            data.value = 2
            return .success(withValue: data)
        }
        #expect(committed && snapshot.json == 2)
    }

    @Test("a set issued after a transaction overwrites it; a set issued before it is what it reads")
    func interactionWithSet() throws {
        let db = try manualDatabase()
        defer { db.close() }
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

    @Test("8 threads × 10,000 increments, by transaction and by ServerValue.increment, end exact")
    func concurrentIncrements() async throws {
        let db = try Database.inMemory()
        defer { db.close() }
        let byTransaction = db.reference(withPath: "counters/tx")
        let byIncrement = db.reference(withPath: "counters/inc")
        let perThread = 10_000
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<perThread {
                        byTransaction.runTransactionBlock(
                            { data in
                                data.value = (data.value as? Int ?? 0) + 1
                                return .success(withValue: data)
                            }, andCompletionBlock: nil)
                    }
                }
                group.addTask {
                    for _ in 0..<perThread { try? increment(byIncrement) }
                }
            }
        }
        let snapshot = try await db.reference(withPath: "counters").getData()
        #expect(snapshot.childSnapshot(forPath: "tx").json == .int(Int64(8 * perThread)))
        #expect(snapshot.childSnapshot(forPath: "inc").json == .int(Int64(8 * perThread)))
    }

    @Test("an observer never sees a post and its user-posts copy differ across multi-path updates")
    func multiPathInvariant() async throws {
        let db = try Database.inMemory()
        defer { db.close() }
        let root = db.reference()
        let broken = Locked(0)
        let checks = Locked(0)
        root.observe(.value) { snapshot in
            let post = snapshot.childSnapshot(forPath: "posts/p1").json
            let copy = snapshot.childSnapshot(forPath: "user-posts/u1/p1").json
            checks.withLock { $0 += 1 }
            if post != copy { broken.withLock { $0 += 1 } }
        }
        await withTaskGroup(of: Void.self) { group in
            for t in 0..<4 {
                group.addTask {
                    for i in 0..<500 {
                        let post: [String: Any] = ["title": "t\(t)-\(i)", "starCount": i]
                        try? update(root, ["posts/p1": post, "user-posts/u1/p1": post])
                    }
                }
            }
        }
        _ = try await root.getData()
        #expect(checks.value > 1)
        #expect(broken.value == 0)
    }

    @Test("write-time aggregation: 8 threads add ratings while a transaction keeps numRatings and avgRating exact")
    func ratingsAggregation() async throws {
        let db = try Database.inMemory()
        defer { db.close() }
        let restaurant = db.reference(withPath: "restaurants/r1")
        let perThread = 500
        await withTaskGroup(of: Void.self) { group in
            for t in 0..<8 {
                group.addTask {
                    for i in 0..<perThread { addRating(to: restaurant, rating: 1 + (t + i) % 5) }
                }
            }
        }
        let snapshot = try await restaurant.getData()
        let ratings = snapshot.childSnapshot(forPath: "ratings").childSnapshots.compactMap {
            ($0.value as? [String: Any])?["rating"] as? Int
        }
        #expect(ratings.count == 8 * perThread)
        let data = snapshot.value as? [String: Any] ?? [:]
        #expect(data["numRatings"] as? Int == ratings.count)
        let average = Double(ratings.reduce(0, +)) / Double(ratings.count)
        #expect(abs((data["avgRating"] as? Double ?? 0) - average) < 1e-9)
    }

    @Test("starring a post toggles stars/uid and keeps starCount equal to the number of stars")
    func starToggle() async throws {
        let db = try Database.inMemory()
        defer { db.close() }
        let post = db.reference(withPath: "posts/p1")
        try await post.setValue(["title": "Hello", "starCount": 0])
        await withTaskGroup(of: Void.self) { group in
            for t in 0..<8 {
                group.addTask {
                    // Each user stars, and users with odd numbers unstar again.
                    toggleStar(post, uid: "u\(t)")
                    if t % 2 == 1 { toggleStar(post, uid: "u\(t)") }
                }
            }
        }
        let snapshot = try await post.getData()
        let value = snapshot.value as? [String: Any] ?? [:]
        let stars = (value["stars"] as? [String: Any]) ?? [:]
        #expect(Set(stars.keys) == ["u0", "u2", "u4", "u6"])
        #expect(value["starCount"] as? Int == stars.count)
    }
}

/// `ServerValue.increment(1)` fire-and-forget (`queueSetValue`).
func increment(_ ref: DatabaseReference) throws { try ref.queueSetValue(ServerValue.increment(1)) }

/// A fire-and-forget multi-path update.
func update(_ ref: DatabaseReference, _ values: [String: Any]) throws { try ref.queueUpdateChildValues(values) }

/// The aggregation pattern: push the rating and fold it into the restaurant's count and average
/// in one transaction. The block touches only the fields it needs (`childData`), so its cost does
/// not grow with the number of ratings, and concurrent raters never lose an update.
func addRating(to restaurant: DatabaseReference, rating: Int) {
    let ratingKey = restaurant.child("ratings").childByAutoId().key!
    restaurant.runTransactionBlock(
        { data in
            let numRatings = data.childData(byAppendingPath: "numRatings")
            let avgRating = data.childData(byAppendingPath: "avgRating")
            let count = numRatings.value as? Int ?? 0
            let average = avgRating.value as? Double ?? 0
            numRatings.value = count + 1
            avgRating.value = (average * Double(count) + Double(rating)) / Double(count + 1)
            data.childData(byAppendingPath: "ratings/\(ratingKey)").value = ["rating": rating]
            return .success(withValue: data)
        }, andCompletionBlock: nil)
}

/// The Firebase quickstart's star toggle: one transaction keeps `stars/$uid` and `starCount` together.
func toggleStar(
    _ postRef: DatabaseReference, uid: String, completion: (((any Error)?, Bool, DataSnapshot?) -> Void)? = nil
) {
    postRef.runTransactionBlock(
        { currentData in
            if var post = currentData.value as? [String: Any] {
                var stars = post["stars"] as? [String: Bool] ?? [:]
                var starCount = post["starCount"] as? Int ?? 0
                if stars[uid] != nil {
                    starCount -= 1
                    stars.removeValue(forKey: uid)
                } else {
                    starCount += 1
                    stars[uid] = true
                }
                post["starCount"] = starCount as AnyObject?
                post["stars"] = stars as AnyObject?
                currentData.value = post
                return TransactionResult.success(withValue: currentData)
            }
            return TransactionResult.success(withValue: currentData)
        }, andCompletionBlock: completion)
}
