import CanopyCore
import CanopyTestSupport
import Foundation
import Testing

@testable import Canopy

/// `DataSnapshot.metadata` and `includeMetadataChanges`: pending writes of a durable database, the
/// cache hook, and the events raised when only the metadata changes.
@Suite("Snapshot metadata")
struct SnapshotMetadataTests {
    /// What an observer saw: the data and the metadata.
    struct Seen: Equatable, CustomStringConvertible {
        var json: JSONValue
        var pending: Bool
        var cached: Bool

        init(_ json: JSONValue, pending: Bool = false, cached: Bool = false) {
            self.json = json
            self.pending = pending
            self.cached = cached
        }

        init(_ snapshot: DataSnapshot) {
            self.init(snapshot.json, pending: snapshot.metadata.hasPendingWrites, cached: snapshot.metadata.isFromCache)
        }

        var description: String { "\(self.json)\(self.pending ? " pending" : "")\(self.cached ? " cached" : "")" }
    }

    /// Snapshots seen by observers; used only on the draining thread.
    final class Log: @unchecked Sendable {  // touched only by the thread that drains the loop
        var seen: [String: [Seen]] = [:]
        var token: PendingWrites.Token?

        func record(_ name: String) -> (DataSnapshot) -> Void {
            { [self] snapshot in self.seen[name, default: []].append(Seen(snapshot)) }
        }

        subscript(_ name: String) -> [Seen] { self.seen[name] ?? [] }
    }

    /// Runs `body` with a database opened at a new temporary directory, driven by `drain()`.
    static func durable(_ body: (Database) throws -> Void) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path, .manual())
        defer { db.close() }
        try body(db)
    }

    static func path(_ string: String) -> DatabasePath {
        DatabasePath(string.split(separator: "/").map { ChildKey(String($0)) })
    }

    @Test("A write to a durable database is pending on its events; includeMetadataChanges adds one event when it is durable")
    func durableWrite() throws {
        try Self.durable { db in
            let log = Log()
            let ref = db.reference(withPath: "a")
            ref.observe(.value, with: log.record("plain"))
            ref.observe(.value, includeMetadataChanges: true, with: log.record("watching"))
            ref.observe(.childAdded, includeMetadataChanges: true, with: log.record("child"))
            db.drain()
            var eventsBeforeCompletion: Int?
            ref.child("x").setValue(1) { error, _ in
                #expect(error == nil)
                eventsBeforeCompletion = log["watching"].count
            }
            db.drain()
            #expect(log["plain"] == [Seen(.null), Seen(["x": 1], pending: true)])
            #expect(log["watching"] == [Seen(.null), Seen(["x": 1], pending: true), Seen(["x": 1])])
            // Child observers get no metadata-only events; their snapshots carry metadata.
            #expect(log["child"] == [Seen(1, pending: true)])
            // The metadata event comes before the write's completion.
            #expect(eventsBeforeCompletion == 3)

            var read: Seen?
            ref.getData { _, snapshot in read = snapshot.map(Seen.init) }
            ref.observeSingleEvent(of: .value, with: log.record("single"))
            db.drain()
            #expect(read == Seen(["x": 1]))
            #expect(log["single"] == [Seen(["x": 1])])
            #expect(db.core.pendingWrites.isEmpty)
            #expect(log["watching"].count == 3)
        }
    }

    @Test("Overlapping pending writes: one metadata event, when the last of them is durable; other locations get none")
    func severalWrites() throws {
        try Self.durable { db in
            let log = Log()
            db.reference(withPath: "a").observe(.value, includeMetadataChanges: true, with: log.record("a"))
            db.reference(withPath: "b").observe(.value, includeMetadataChanges: true, with: log.record("b"))
            db.drain()
            try db.reference(withPath: "a/x").queueSetValue(1)
            try db.reference(withPath: "a/y").queueSetValue(2)
            db.drain()
            #expect(
                log["a"] == [Seen(.null), Seen(["x": 1], pending: true), Seen(["x": 1, "y": 2], pending: true), Seen(["x": 1, "y": 2])])
            #expect(log["b"] == [Seen(.null)])
            // A later write, durable in another turn, gets its own pair.
            try db.reference(withPath: "a/x").queueSetValue(3)
            db.drain()
            #expect(log["a"].suffix(2) == [Seen(["x": 3, "y": 2], pending: true), Seen(["x": 3, "y": 2])])
            #expect(log["a"].count == 6)
            #expect(log["b"] == [Seen(.null)])
        }
    }

    @Test("A pending write covers its location, those above and below it; not its siblings")
    func overlapRules() throws {
        try Self.durable { db in
            let log = Log()
            var during: [String: Bool] = [:]
            db.reference(withPath: "a/b/c").observe(.value, includeMetadataChanges: true, with: log.record("below"))
            db.reference(withPath: "a").observe(.value, includeMetadataChanges: true, with: log.record("above"))
            db.reference(withPath: "a/s").observe(.value, includeMetadataChanges: true, with: log.record("sibling"))
            db.reference(withPath: "a/b").observe(.value) { snapshot in
                guard snapshot.metadata.hasPendingWrites else { return }
                // On the loop, while the write is pending: what a snapshot at each location would carry.
                for location in ["a/s", "a/b/c/d", "a", "", "a/bb", "b"] {
                    during[location] = db.core.metadata(at: Self.path(location)).hasPendingWrites
                }
            }
            db.drain()
            try db.reference(withPath: "a/b").queueSetValue(["c": 1])
            db.drain()
            #expect(during == ["a/s": false, "a/b/c/d": true, "a": true, "": true, "a/bb": false, "b": false])
            #expect(log["below"] == [Seen(.null), Seen(1, pending: true), Seen(1)])
            #expect(log["above"] == [Seen(.null), Seen(["b": ["c": 1]], pending: true), Seen(["b": ["c": 1]])])
            #expect(log["sibling"] == [Seen(.null)])
        }
    }

    @Test("A write the journal fails is undone while still pending, then the metadata settles")
    func failedWrite() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (db, io, completions) = try StorageFaultTests.openWithOneWrite(dir)
        defer { db.close() }
        let log = Log()
        db.reference(withPath: "a").observe(.value, includeMetadataChanges: true, with: log.record("a"))
        db.drain()
        io.arm { $0.failingWrites = 1 }
        StorageFaultTests.set(db, "a", 2, completions, 1)
        db.drain()
        #expect(completions.failed == [1])
        #expect(log["a"] == [Seen(1), Seen(2, pending: true), Seen(1, pending: true), Seen(1)])
        #expect(db.core.pendingWrites.isEmpty)
    }

    @Test("In memory a write is never pending, and includeMetadataChanges adds no event")
    func inMemory() throws {
        let db = try manualDatabase()
        defer { db.close() }
        let log = Log()
        let ref = db.reference(withPath: "a")
        ref.observe(.value, includeMetadataChanges: true, with: log.record("watching"))
        ref.observe(.childAdded, includeMetadataChanges: true, with: log.record("child"))
        db.drain()
        try ref.child("x").queueSetValue(1)
        try ref.queueUpdateChildValues(["y": 2, "x": 3])
        db.drain()
        #expect(log["watching"] == [Seen(.null), Seen(["x": 1]), Seen(["x": 3, "y": 2])])
        #expect(log["child"] == [Seen(1), Seen(2)])
        #expect(db.core.pendingWrites.isEmpty)
    }

    @Test("Writes of triggers, batches and transactions are pending until durable")
    func triggersBatchesTransactions() throws {
        try Self.durable { db in
            let log = Log()
            try db.onValueCreated("/orders/{id}") { _ in
                db.reference(withPath: "count").setValue(ServerValue.increment(1)) { _, _ in }
            }
            db.reference(withPath: "count").observe(.value, includeMetadataChanges: true, with: log.record("count"))
            db.reference(withPath: "p").observe(.value, includeMetadataChanges: true, with: log.record("p"))
            db.reference(withPath: "q").observe(.value, includeMetadataChanges: true, with: log.record("q"))
            db.drain()
            try db.reference(withPath: "orders/1").queueSetValue("x")
            db.drain()
            #expect(log["count"] == [Seen(.null), Seen(1, pending: true), Seen(1)])

            let batch = db.batch()
            try batch.setValue(1, for: db.reference(withPath: "p/k1"))
            try batch.setValue(1, for: db.reference(withPath: "q/k1"))
            batch.commit(completion: nil)
            db.drain()
            #expect(log["p"] == [Seen(.null), Seen(["k1": 1], pending: true), Seen(["k1": 1])])
            #expect(log["q"] == [Seen(.null), Seen(["k1": 1], pending: true), Seen(["k1": 1])])

            db.runTransaction(
                { transaction in
                    let count = try transaction.getData(db.reference(withPath: "count")).value as? Int ?? 0
                    try transaction.setValue(count + 1, for: db.reference(withPath: "count"))
                    try transaction.setValue(2, for: db.reference(withPath: "p/k1"))
                    return count
                }, completion: { result in #expect((try? result.get()) != nil) })
            db.drain()
            #expect(log["count"].suffix(2) == [Seen(2, pending: true), Seen(2)])
            #expect(log["p"].suffix(2) == [Seen(["k1": 2], pending: true), Seen(["k1": 2])])
            #expect(log["q"].count == 3)
            #expect(db.core.pendingWrites.isEmpty)
        }
    }

    @Test("A removed observer gets no metadata event and leaves the watchers")
    func removal() throws {
        try Self.durable { db in
            let log = Log()
            let ref = db.reference(withPath: "a")
            var handle: DatabaseHandle = 0
            handle = ref.observe(.value, includeMetadataChanges: true) { snapshot in
                log.record("removed")(snapshot)
                // Removed from inside its pending event: the write's end must not reach it.
                if snapshot.metadata.hasPendingWrites { ref.removeObserver(withHandle: handle) }
            }
            let kept = ref.observe(.value, includeMetadataChanges: true, with: log.record("kept"))
            db.drain()
            try ref.queueSetValue(1)
            db.drain()
            #expect(log["removed"] == [Seen(.null), Seen(1, pending: true)])
            #expect(log["kept"] == [Seen(.null), Seen(1, pending: true), Seen(1)])
            ref.removeObserver(withHandle: kept)
            db.drain()
            #expect(db.core.metadataWatchers.isEmpty)
        }
    }

    @Test("The cache hook and metadataChanged(at:) raise events only for changed metadata at overlapping locations")
    func fromCache() throws {
        let db = try manualDatabase()
        defer { db.close() }
        let log = Log()
        var cached: Set<String> = ["/a", "/c"]
        db.core.install(CacheHookBackend(core: db.core) { path in cached.contains { Self.path($0).contains(path) } })
        try db.reference(withPath: "a/b").queueSetValue(1)
        db.reference(withPath: "a").observe(.value, includeMetadataChanges: true, with: log.record("a"))
        db.reference(withPath: "a").observe(.value, with: log.record("plain"))
        db.reference(withPath: "c").observe(.value, includeMetadataChanges: true, with: log.record("c"))
        db.drain()
        #expect(log["a"] == [Seen(["b": 1], cached: true)])
        #expect(log["c"] == [Seen(.null, cached: true)])

        cached = []
        db.core.perform { db.core.metadataChanged(at: Self.path("a/b")) }
        db.drain()
        #expect(log["a"] == [Seen(["b": 1], cached: true), Seen(["b": 1])])
        #expect(log["plain"] == [Seen(["b": 1], cached: true)])
        // /c is not at, above or below /a/b: not re-checked.
        #expect(log["c"] == [Seen(.null, cached: true)])

        db.core.perform { db.core.metadataChanged(at: .root) }
        db.drain()
        #expect(log["a"].count == 2)
        #expect(log["c"] == [Seen(.null, cached: true), Seen(.null)])
    }

    @Test("A remote client's begin/end: getData, observeSingleEvent and values() carry the metadata; end raises the event")
    func remoteSeam() async throws {
        let db = try manualDatabase()
        defer { db.close() }
        let log = Log()
        let ref = db.reference(withPath: "a")
        ref.setValue(["b": 1]) { _, _ in }
        // A remote client begins a write before raising its events: observers registered earlier get
        // those events; this one, registered after, starts pending.
        db.core.perform {
            log.token = db.core.pendingWrites.begin(.set(Self.path("a/b"), WriteValue(node: .leaf(.int(2)))))
        }
        ref.observe(.value, includeMetadataChanges: true, with: log.record("a"))
        db.drain()
        var read: [String: Seen] = [:]
        ref.getData { _, snapshot in read["a"] = snapshot.map(Seen.init) }
        db.reference(withPath: "a/c").getData { _, snapshot in read["a/c"] = snapshot.map(Seen.init) }
        db.reference(withPath: "a/b/z").observeSingleEvent(of: .value) { read["a/b/z"] = Seen($0) }
        db.drain()
        #expect(read == ["a": Seen(["b": 1], pending: true), "a/c": Seen(.null), "a/b/z": Seen(.null, pending: true)])

        var values = ref.values(includeMetadataChanges: true).makeAsyncIterator()
        db.drain()
        let first = try await values.next()
        #expect(first.map(Seen.init) == Seen(["b": 1], pending: true))
        db.core.perform { if let token = log.token { db.core.pendingWrites.end(token) } }
        db.drain()
        let second = try await values.next()
        #expect(second.map(Seen.init) == Seen(["b": 1]))
        #expect(log["a"] == [Seen(["b": 1], pending: true), Seen(["b": 1])])
    }
}
