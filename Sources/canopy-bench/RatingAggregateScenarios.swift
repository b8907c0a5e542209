import Canopy
import Foundation

/// B15 and B16: the guide's restaurant ratings, the aggregate (`numRatings`, `ratingTotal`,
/// `avgRating`) kept by a 2-location transaction per rating, or by a trigger on new ratings.
let ratingAggregateScenarios: [Scenario] = [
    Scenario(name: "B15.tx.rating", stores: [.memory]) { try ratingTransactions("B15.tx.rating", $0) },
    Scenario(name: "B16.trigger.aggregate", stores: [.memory]) { try triggerAggregate("B16.trigger.aggregate", $0) },
]

private let restaurantCount = 16

/// The aggregate after one more rating.
private func aggregate(adding rating: Int, to restaurant: DataSnapshot) -> [String: Any] {
    let count = (restaurant.childSnapshot(forPath: "numRatings").value as? Int ?? 0) + 1
    let total = (restaurant.childSnapshot(forPath: "ratingTotal").value as? Int ?? 0) + rating
    return ["numRatings": count, "ratingTotal": total, "avgRating": Double(total) / Double(count)]
}

/// Checks every restaurant's aggregate against what was written: `n` ratings in all, rating
/// `i` (1…5) to restaurant `i % restaurantCount`.
private func checkAggregates(_ db: Database, n: Int) throws -> String {
    let restaurants = try blockingGetData(db.reference(withPath: "restaurants"))
    var ratings = 0
    for r in 0..<restaurantCount {
        let restaurant = restaurants.childSnapshot(forPath: "r\(r)")
        let written = stride(from: r, to: n, by: restaurantCount).map { $0 % 5 + 1 }
        let count = restaurant.childSnapshot(forPath: "numRatings").value as? Int ?? -1
        let total = restaurant.childSnapshot(forPath: "ratingTotal").value as? Int ?? -1
        let average = restaurant.childSnapshot(forPath: "avgRating").value as? Double ?? -1
        ratings += Int(restaurant.childSnapshot(forPath: "ratings").childrenCount)
        if count != written.count || total != written.reduce(0, +) || average != Double(total) / Double(count) {
            return "FAIL r\(r): numRatings \(count), ratingTotal \(total), avgRating \(average); expected \(written.count) ratings"
        }
    }
    return ratings == n ? "ok" : "FAIL \(ratings) ratings stored, expected \(n)"
}

/// B15: `addRating` as a multi-location transaction: read the restaurant, write the new rating and
/// the restaurant's aggregate together; issued from one thread, applied on the loop.
func ratingTransactions(_ name: String, _ store: Store) throws -> BenchResult {
    let db = try Database.inMemory()
    defer { db.close() }
    let n = Bench.scaled(200_000)
    let restaurants = (0..<restaurantCount).map { db.reference(withPath: "restaurants/r\($0)") }
    let failures = Failures()
    let start = monotonicNanos()
    for i in 0..<n {
        let restaurant = restaurants[i % restaurantCount]
        let ratingRef = restaurant.child("ratings").childByAutoId()
        let rating = i % 5 + 1
        db.runTransaction(
            { transaction in
                let updated = aggregate(adding: rating, to: try transaction.getData(restaurant))
                try transaction.setValue(["rating": rating, "userId": "u"], for: ratingRef)
                try transaction.updateChildValues(updated, for: restaurant)
            },
            completion: { result in if case .failure = result { failures.count += 1 } })
    }
    _ = try blockingGetData(db.reference(withPath: "restaurants/r0/numRatings"))
    let seconds = secondsSince(start)
    let check = failures.count > 0 ? "FAIL \(failures.count) transactions failed" : try checkAggregates(db, n: n)
    return BenchResult(scenario: name, store: store, n: n, seconds: seconds, extra: [("locations", .int(2))], check: check)
}

/// B16: ratings written plainly; a trigger on new ratings keeps the aggregate with a transaction
/// (the guide's Cloud Function, in-process). Timed until every rating and aggregate is applied.
func triggerAggregate(_ name: String, _ store: Store) throws -> BenchResult {
    let db = try Database.inMemory()
    defer { db.close() }
    let n = Bench.scaled(100_000)
    let failures = Failures()
    db.onTriggerError { _ in failures.count += 1 }
    try db.onValueCreated("/restaurants/{restId}/ratings/{ratingId}") { event in
        let rating = event.after.childSnapshot(forPath: "rating").value as? Int ?? 0
        let restaurant = db.reference(withPath: "restaurants/\(event.params["restId"]!)")
        db.runTransaction(
            { transaction in
                try transaction.updateChildValues(aggregate(adding: rating, to: try transaction.getData(restaurant)), for: restaurant)
            },
            completion: { result in if case .failure = result { failures.count += 1 } })
    }
    let ratings = (0..<restaurantCount).map { db.reference(withPath: "restaurants/r\($0)/ratings") }
    let start = monotonicNanos()
    for i in 0..<n {
        try ratings[i % restaurantCount].childByAutoId().queueSetValue(["rating": i % 5 + 1, "userId": "u"])
    }
    _ = try blockingGetData(db.reference(withPath: "restaurants/r0/numRatings"))
    let seconds = secondsSince(start)
    let check = failures.count > 0 ? "FAIL \(failures.count) trigger failures" : try checkAggregates(db, n: n)
    return BenchResult(scenario: name, store: store, n: n, seconds: seconds, extra: [("triggers", .int(1))], check: check)
}

/// Failures counted on the loop thread, read after a barrier.
// @unchecked Sendable: written only on the loop thread, read after `blockingGetData` returned.
private final class Failures: @unchecked Sendable {
    var count = 0
}
