import Canopy
import CanopyCore
import CanopyServer
import Foundation
import Testing

/// Triggers registered on a server's namespaces (`NamespaceStore.onDatabaseOpen`) fire for writes
/// made by REST and WebSocket clients, and their writes reach the clients' streams.
@Suite("Triggers on the server")
struct TriggerServerTests {
    /// A server whose namespaces keep `numRatings`, `ratingTotal` and `avgRating` of each restaurant
    /// with a trigger on new ratings; returns it and a tally of the trigger's runs.
    static func ratingServer() throws -> (CanopyServer, Tally) {
        let server = makeServer()
        let tally = Tally()
        try server.store.onDatabaseOpen { _, db in
            try db.onValueCreated("/restaurants/{restId}/ratings/{ratingId}") { event in
                tally.add(event.params["restId"] ?? "?")
                let rating = event.after.childSnapshot(forPath: "rating").value as? Int ?? 0
                let restaurant = db.reference(withPath: "restaurants/\(event.params["restId"]!)")
                db.runTransaction(
                    { transaction in
                        let current = try transaction.getData(restaurant)
                        let count = (current.childSnapshot(forPath: "numRatings").value as? Int ?? 0) + 1
                        let total = (current.childSnapshot(forPath: "ratingTotal").value as? Int ?? 0) + rating
                        try transaction.updateChildValues(
                            ["numRatings": count, "ratingTotal": total, "avgRating": Double(total) / Double(count)], for: restaurant)
                    }, completion: { _ in })
            }
        }
        return (server, tally)
    }

    // @unchecked Sendable: guarded by its lock.
    final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private var fired: [String] = []
        func add(_ restaurant: String) { self.lock.withLock { self.fired.append(restaurant) } }
        var all: [String] { self.lock.withLock { self.fired } }
    }

    @Test("REST writes fire the trigger; its aggregate write reaches a server-sent event stream")
    func rest() async throws {
        let (server, tally) = try Self.ratingServer()
        try await withLiveServer(server) { port in
            let stream = try await EventStreamClient.open(port: port, "/restaurants/rest.json")
            try await StreamTests.expectEvent(stream, "put", "/", .null)
            let put = try await StreamTests.request(port, "PUT", "/restaurants/rest/ratings/a.json", #"{"rating": 5}"#)
            #expect(put.status == 200)
            try await StreamTests.expectEvent(stream, "put", "/ratings/a", ["rating": 5])
            try await StreamTests.expectEvent(stream, "patch", "/", ["numRatings": 1, "ratingTotal": 5, "avgRating": 5])
            // A PATCH creating two ratings at once fires the trigger once per rating.
            let patch = try await StreamTests.request(
                port, "PATCH", "/restaurants/rest/ratings.json", #"{"b": {"rating": 2}, "c": {"rating": 3}}"#)
            #expect(patch.status == 200)
            try await StreamTests.expectEvent(stream, "patch", "/ratings", ["b": ["rating": 2], "c": ["rating": 3]])
            try await StreamTests.expectEvent(stream, "patch", "/", ["numRatings": 2, "ratingTotal": 7, "avgRating": 3.5])
            try await StreamTests.expectEvent(stream, "patch", "/", ["numRatings": 3, "ratingTotal": 10, "avgRating": .double(10.0 / 3)])
            // Changing a rating is no creation: no run.
            try await StreamTests.request(port, "PUT", "/restaurants/rest/ratings/a/rating.json", "4")
            try await StreamTests.expectEvent(stream, "put", "/ratings/a/rating", 4)
            let read = try await StreamTests.request(port, "GET", "/restaurants/rest/numRatings.json")
            #expect(read.body == "3")
            #expect(tally.all == ["rest", "rest", "rest"])
            await stream.connection.close()
            // A PUT answers with what it wrote, not what the trigger it fired wrote after it.
            let other = try await StreamTests.request(port, "PUT", "/restaurants/other.json", #"{"ratings": {"x": {"rating": 3}}}"#)
            #expect(try json(other.body) == ["ratings": ["x": ["rating": 3]]])
            let after = try await StreamTests.request(port, "GET", "/restaurants/other/avgRating.json")
            #expect(after.body == "3")
        }
    }

    @Test(
        "WebSocket writes fire the trigger, and the client reads its aggregate",
        .enabled(if: PythonClient.runnable, PythonClient.skipReason))
    func webSocket() async throws {
        let (server, tally) = try Self.ratingServer()
        try await withLiveServer(server) { port in
            try await PythonClient.run(
                "wire_protocol_client", ["ws://127.0.0.1:\(port)", "trigger_write"], expecting: "wire: trigger_write ok")
            let db = try await server.store.database("wire")
            let snapshot = try await db.reference(withPath: "restaurants/ws").getData()
            #expect(snapshot.childSnapshot(forPath: "numRatings").value as? Int == 2)
            #expect(snapshot.childSnapshot(forPath: "avgRating").value as? Double == 2.5)
        }
        #expect(tally.all == ["ws", "ws"])
    }

    @Test("a namespace already open gets the set-up at once; one that throws fails to open, and a later request retries")
    func setUpTiming() async throws {
        let store = NamespaceStore(directory: nil)
        let early = try await store.database("early")
        let seen = Tally()
        store.onDatabaseOpen { name, _ in seen.add(name) }
        #expect(seen.all == ["early"])
        _ = early
        let fails = Tally()
        try store.onDatabaseOpen { name, _ in
            if name == "broken" && fails.all.isEmpty {
                fails.add(name)
                throw DatabaseError(.invalidOperation, "not yet")
            }
        }
        await #expect(throws: (any Error).self) { _ = try await store.database("broken") }
        _ = try await store.database("broken")
        // The first opening of "broken" ran the first set-up, then failed in the second.
        #expect(seen.all == ["early", "broken", "broken"])
        await store.close()
    }
}
