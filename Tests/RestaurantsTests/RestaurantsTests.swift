import Canopy
import CanopyTestSupport
import Foundation
import Testing

/// Runs the built `Restaurants` sample (8 concurrent writers, each way) and checks, independently
/// of the sample's own check, what it left in its databases.
@Suite("Restaurants sample")
struct RestaurantsTests {
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: builtExecutable("Restaurants"))
        process.arguments = arguments
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = stdout
        try process.run()
        let watchdog = ProcessWatchdog(process, "Restaurants \(arguments.joined(separator: " ")) to exit")
        let data = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try watchdog.check()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test(
        "8 concurrent writers, each way: numRatings counts the ratings and avgRating is exactly their average",
        arguments: ["transaction", "trigger"])
    func exactAverages(way: String) async throws {
        let directory = TemporaryDirectory("restaurants")
        let writers = 8
        let ratings = 60
        let result = try Self.run(["--way", way, "--writers", "\(writers)", "--ratings", "\(ratings)", "--db", directory.path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("\(way): invariants ok"), "\(result.output)")
        let db = try Database(path: "\(directory.path)/\(way)")
        defer { db.close() }
        let restaurants = try await db.reference(withPath: "restaurants").getData()
        #expect(restaurants.childrenCount == 3)
        var all = 0
        for restaurant in restaurants.childSnapshots {
            let values = restaurant.childSnapshot(forPath: "ratings").childSnapshots.map {
                $0.childSnapshot(forPath: "rating").value as! Int
            }
            all += values.count
            #expect(values.allSatisfy { (1...5).contains($0) })
            #expect(restaurant.childSnapshot(forPath: "numRatings").value as? Int == values.count)
            #expect(restaurant.childSnapshot(forPath: "avgRating").value as? Double == Double(values.reduce(0, +)) / Double(values.count))
        }
        #expect(all == writers * ratings)
    }

    @Test("bad arguments exit 2 with a one-line message")
    func badArguments() throws {
        let result = try Self.run(["--way", "sideways"])
        #expect(result.status == 2)
        #expect(result.output == "Restaurants: --way needs transaction, trigger or both\n")
    }
}
