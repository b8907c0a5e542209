import Canopy
import Foundation

/// The guide's write-time aggregation ("Aggregation queries: write-time aggregations"): each
/// restaurant keeps `numRatings` and `avgRating` current as ratings are added, in two ways.
///
/// The guide recovers the old total as `avgRating × numRatings`, which drifts in floating point;
/// here each restaurant also keeps the integer `ratingTotal`, so `avgRating` is always exactly
/// `ratingTotal / numRatings`.
enum Ratings {
    /// The aggregate after one more rating, from the restaurant as it is now.
    static func aggregate(adding rating: Int, to restaurant: DataSnapshot) -> [String: Any] {
        let count = (restaurant.childSnapshot(forPath: "numRatings").value as? Int ?? 0) + 1
        let total = (restaurant.childSnapshot(forPath: "ratingTotal").value as? Int ?? 0) + rating
        return ["numRatings": count, "ratingTotal": total, "avgRating": Double(total) / Double(count)]
    }

    /// Way 1, the guide's `addRating`: one multi-location transaction writes the new rating and the
    /// restaurant's aggregate together, or nothing. Returns the new average.
    @discardableResult
    static func addRatingInTransaction(_ db: Database, restaurant: String, rating: Int, userID: String) async throws -> Double {
        let restaurantRef = db.reference(withPath: "restaurants/\(restaurant)")
        let ratingRef = restaurantRef.child("ratings").childByAutoId()
        return try await db.runTransaction { transaction in
            let aggregate = Self.aggregate(adding: rating, to: try transaction.getData(restaurantRef))
            try transaction.setValue(["rating": rating, "userId": userID], for: ratingRef)
            try transaction.updateChildValues(aggregate, for: restaurantRef)
            return aggregate["avgRating"] as? Double ?? 0
        }
    }

    /// Way 2, the guide's Cloud Function: a trigger on new ratings updates the aggregate in a
    /// transaction, right after each rating is written.
    @discardableResult
    static func installAggregateTrigger(_ db: Database) throws -> TriggerRegistration {
        try db.onValueCreated("/restaurants/{restId}/ratings/{ratingId}") { event in
            let rating = event.after.childSnapshot(forPath: "rating").value as? Int ?? 0
            let restaurantRef = db.reference(withPath: "restaurants/\(event.params["restId"]!)")
            // The completion form: inside a trigger it runs right after the triggers of this write.
            db.runTransaction(
                { transaction in
                    try transaction.updateChildValues(
                        Self.aggregate(adding: rating, to: try transaction.getData(restaurantRef)), for: restaurantRef)
                },
                completion: { result in
                    if case .failure(let error) = result { FileHandle.standardError.write(Data("aggregate failed: \(error)\n".utf8)) }
                })
        }
    }

    /// With the trigger installed: adding a rating is an ordinary write.
    static func addRatingPlain(_ db: Database, restaurant: String, rating: Int, userID: String) async throws {
        try await db.reference(withPath: "restaurants/\(restaurant)/ratings").childByAutoId().setValue(["rating": rating, "userId": userID])
    }
}
