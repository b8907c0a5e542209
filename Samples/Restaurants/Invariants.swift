import Canopy

/// What the database holds after a run, checked against the ratings themselves.
struct Invariants {
    struct Restaurant {
        var id: String
        var name: String
        var ratings: Int
        var average: Double
    }

    var restaurants: [Restaurant] = []
    var violations: [String] = []

    /// Recomputes every restaurant's aggregate from its ratings and compares: `numRatings` is the
    /// number of ratings, `ratingTotal` their sum, `avgRating` exactly `sum / count`.
    static func check(_ db: Database) async throws -> Invariants {
        var result = Invariants()
        let all = try await db.reference(withPath: "restaurants").getData()
        for restaurant in all.childSnapshots {
            let id = restaurant.key ?? "?"
            let ratings = restaurant.childSnapshot(forPath: "ratings").childSnapshots.map {
                $0.childSnapshot(forPath: "rating").value as? Int ?? 0
            }
            let count = restaurant.childSnapshot(forPath: "numRatings").value as? Int ?? 0
            let total = restaurant.childSnapshot(forPath: "ratingTotal").value as? Int ?? 0
            let average = restaurant.childSnapshot(forPath: "avgRating").value as? Double ?? 0
            let sum = ratings.reduce(0, +)
            let expected = ratings.isEmpty ? 0 : Double(sum) / Double(ratings.count)
            if count != ratings.count { result.violations.append("\(id): numRatings \(count) but \(ratings.count) ratings") }
            if total != sum { result.violations.append("\(id): ratingTotal \(total) but the ratings sum to \(sum)") }
            if average != expected { result.violations.append("\(id): avgRating \(average) but the ratings average \(expected)") }
            let name = restaurant.childSnapshot(forPath: "name").value as? String ?? id
            result.restaurants.append(Restaurant(id: id, name: name, ratings: ratings.count, average: average))
        }
        return result
    }
}
