import Canopy
import Foundation

// The guide's restaurants with write-time aggregates (numRatings, avgRating), kept two ways on an
// embedded Canopy database: a multi-location transaction per rating, and a trigger on new ratings.
// Concurrent writers add ratings; then every aggregate is checked against the ratings themselves.
//
//   swift run Restaurants                          both ways, 8 writers of 50 ratings each
//   --way transaction|trigger|both                 which way
//   --writers N  --ratings M                       N concurrent writers, M ratings each
//   --db DIR                                       keep the databases in DIR/transaction, DIR/trigger

var way = "both"
var writers = 8
var ratingsPerWriter = 50
var directory: String?
var arguments = CommandLine.arguments.dropFirst()
let usage = "usage: Restaurants [--way transaction|trigger|both] [--writers N] [--ratings M] [--db DIR]"
while let argument = arguments.popFirst() {
    switch argument {
    case "--way":
        guard let value = arguments.popFirst(), ["transaction", "trigger", "both"].contains(value) else {
            fail("--way needs transaction, trigger or both")
        }
        way = value
    case "--writers":
        guard let value = arguments.popFirst().flatMap({ Int($0) }), value > 0 else { fail("--writers needs a positive number") }
        writers = value
    case "--ratings":
        guard let value = arguments.popFirst().flatMap({ Int($0) }), value >= 0 else { fail("--ratings needs a number") }
        ratingsPerWriter = value
    case "--db":
        guard let value = arguments.popFirst() else { fail("--db needs a directory") }
        directory = value
    case "-h", "--help":
        print(usage)
        exit(0)
    default:
        fail("unknown argument \(argument) (\(usage))")
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("Restaurants: \(message)\n".utf8))
    exit(2)
}

let restaurants = ["bistro": "Le Bistro", "noodle": "Noodle Bar", "taqueria": "Taqueria Sol"]

/// Runs `writers` concurrent writers adding ratings the given way; returns the invariants found after.
func run(_ way: String, writers: Int, ratingsPerWriter: Int, directory: String?) async throws -> Invariants {
    let db = try directory.map { try Database(path: "\($0)/\(way)") } ?? Database.inMemory()
    defer { db.close() }
    for (id, name) in restaurants { try await db.reference(withPath: "restaurants/\(id)/name").setValue(name) }
    if way == "trigger" { try Ratings.installAggregateTrigger(db) }
    let ids = restaurants.keys.sorted()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in 0..<writers {
            group.addTask {
                var random = SystemRandomNumberGenerator()
                for _ in 0..<ratingsPerWriter {
                    let restaurant = ids.randomElement(using: &random)!
                    let rating = Int.random(in: 1...5, using: &random)
                    if way == "transaction" {
                        try await Ratings.addRatingInTransaction(db, restaurant: restaurant, rating: rating, userID: "user\(writer)")
                    } else {
                        try await Ratings.addRatingPlain(db, restaurant: restaurant, rating: rating, userID: "user\(writer)")
                    }
                }
            }
        }
        try await group.waitForAll()
    }
    return try await Invariants.check(db)
}

var status: Int32 = 0
for current in way == "both" ? ["transaction", "trigger"] : [way] {
    do {
        let result = try await run(current, writers: writers, ratingsPerWriter: ratingsPerWriter, directory: directory)
        print("\(current): \(writers) writers added \(writers * ratingsPerWriter) ratings")
        for restaurant in result.restaurants {
            print("  \(restaurant.name): \(restaurant.ratings) ratings, average \(String(format: "%.4f", restaurant.average))")
        }
        if result.violations.isEmpty {
            print("\(current): invariants ok: numRatings, ratingTotal and avgRating match the ratings exactly")
        } else {
            for violation in result.violations { print("\(current): INVARIANT VIOLATED: \(violation)") }
            status = 1
        }
    } catch {
        print("\(current): error: \(error)")
        status = 1
    }
}
exit(status)
