import Canopy
import CanopyTestSupport
import Foundation
import Testing

/// Transactions through the async API and from many threads at once, on a database whose loop
/// runs on its own thread.
@Suite("Transactions on a running loop")
struct TransactionRunningLoopTests {
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
