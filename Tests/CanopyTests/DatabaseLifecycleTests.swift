import CanopyCore
import CanopyLoop
import CanopyTestSupport
import Foundation
import Testing

@testable import Canopy

@Suite("Database lifecycle, Codable and indexes")
struct DatabaseLifecycleTests {
    struct Post: Codable, Equatable {
        var title: String
        var starCount: Int
        var tags: [String]
        var metrics: [String: Double]?
    }

    @Test("setValue(from:) and data(as:) round-trip a Codable value")
    func codable() async throws {
        let db = try Database.inMemory()
        defer { db.close() }
        let ref = db.reference(withPath: "posts/p1")
        let post = Post(title: "Hello", starCount: 3, tags: ["swift", "linux"], metrics: ["views": 12.5])
        try await ref.setValue(from: post)
        let snapshot = try await ref.getData()
        #expect(try snapshot.data(as: Post.self) == post)
        #expect(snapshot.childSnapshot(forPath: "tags").json == ["swift", "linux"])
        #expect(throws: DecodingError.self) { _ = try snapshot.childSnapshot(forPath: "missing").data(as: Post.self) }
    }

    @Test("setValue(from:) rejects an encoded value with an invalid key and writes nothing")
    func codableInvalidKey() async throws {
        let db = try Database.inMemory()
        defer { db.close() }
        let ref = db.reference(withPath: "m")
        try await ref.setValue(1)
        await #expect(throws: DatabaseError.self) { try await ref.setValue(from: ["a.b": 1]) }
        #expect(try await ref.getData().json == 1)
    }

    @Test("run() drives the loop on the calling thread until close() is called from a callback")
    func blockingRun() throws {
        var configuration = Database.Configuration()
        configuration.loopMode = .callerThread
        let db = try Database.inMemory(configuration)
        var values: [JSONValue] = []
        db.reference(withPath: "x").observe(.value) { snapshot in
            values.append(snapshot.json)
            if snapshot.json == 2 { db.close() }
        }
        try db.reference(withPath: "x").queueSetValue(1)
        try db.reference(withPath: "x").queueSetValue(2)
        try db.run()
        #expect(values == [.null, 1, 2])
        #expect(db.isClosed)
        #expect(db.core.loop.closeReport?.isClean == true)
    }

    @Test("run() refuses a database whose loop runs on its own thread")
    func runNeedsCallerThreadMode() throws {
        let db = try Database.inMemory()
        defer { db.close() }
        #expect(throws: DatabaseError.self) { try db.run() }
    }

    @Test("an index lives while a query uses it (or keepSynced pins it) and is dropped after")
    func indexLifecycle() throws {
        let db = try manualDatabase()
        defer { db.close() }
        let posts = db.reference(withPath: "posts")
        try posts.queueSetValue(["a": ["s": 1], "b": ["s": 2]])
        func indexes() -> Int {
            let count = Locked(-1)
            db.core.read { engine in count.withLock { $0 = engine.indexCount } }
            db.drain()
            return count.value
        }
        let query = posts.queryOrdered(byChild: "s").queryLimited(toLast: 1)
        let h1 = query.observe(.value) { _ in }
        let h2 = posts.queryOrdered(byChild: "s").observe(.childAdded) { _ in }
        db.drain()
        #expect(indexes() == 1)  // both views share the index of (posts, child s)
        query.removeObserver(withHandle: h1)
        #expect(indexes() == 1)
        posts.removeObserver(withHandle: h2)
        #expect(indexes() == 0)
        query.keepSynced(true)
        #expect(indexes() == 1)
        query.keepSynced(true)
        query.keepSynced(false)
        #expect(indexes() == 0)
        // Key order needs no index.
        posts.queryOrderedByKey().queryLimited(toFirst: 1).observe(.value) { _ in }
        #expect(indexes() == 0)
    }
}
