import CanopyRemote
import CanopyServer
import CanopyTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// Filtered queries of `Database(url:)` go to the server as tagged listens: the cache holds their
/// windows (with a margin of ten children or the limit again), not the location's whole data, and
/// the events are the embedded engine's.
@Suite("Database(url:): queries answered by the server", .serialized)
struct RemoteQueryTests {
    /// `items/k000`…: `{"n": i}` for i in `range`.
    static func items(_ range: Range<Int>) -> [String: Any] {
        Dictionary(uniqueKeysWithValues: range.map { (String(format: "k%03d", $0), ["n": $0] as [String: Any]) })
    }

    /// A client of a server where another client has written `items(range)` at `items` and settled.
    static func withItems(_ range: Range<Int>, _ body: @escaping @Sendable (Database) throws -> Void) async throws {
        try await RemoteClientTests.withClients(2) { _, clients in
            let (db, writer) = (clients[0], clients[1])
            try writer.reference(withPath: "items").queueSetValue(Self.items(range))
            try writer.settle()
            try body(db)
        }
    }

    static func keys(_ value: JSONValue) -> [String] {
        guard case .object(let members) = value else { return [] }
        return members.keys.sorted()
    }

    /// What the client's cache holds at `path`: a plain read while offline answers from it
    /// (`null` when it holds nothing there).
    static func cached(_ db: Database, _ path: String) throws -> JSONValue {
        db.goOffline()
        defer { db.goOnline() }
        do {
            return try read(db, path)
        } catch let error as DatabaseError where error.code == .disconnected {
            return .null
        }
    }

    @Test("a limited query transfers its window and margin, not the location; a plain listen above makes it whole")
    func aLimitedQueryHoldsItsWindow() async throws {
        try await Self.withItems(0..<100) { db in
            let windows = Collected<[String]>()
            db.reference(withPath: "items").queryOrdered(byChild: "n").queryLimited(toLast: 2).observe(.value) {
                windows.append(Self.keys($0.exportJSON))
            }
            try db.settle()
            #expect(windows.items == [["k098", "k099"]])
            // The server sent the last 12 (the limit, and a margin of 10): nothing else is cached.
            #expect(Self.keys(try Self.cached(db, "items")) == (88..<100).map { String(format: "k%03d", $0) })
            // A plain observer of the location gets all of it.
            try db.settle()
            let whole = Collected<Int>()
            db.reference(withPath: "items").observe(.value) { whole.append(Int($0.childrenCount)) }
            try db.settle()
            #expect(whole.items == [100])
            #expect(Self.keys(try Self.cached(db, "items")).count == 100)
            try db.settle()
            #expect(windows.items == [["k098", "k099"]], "the complete data changes nothing in the window")
        }
    }

    @Test("children moving into and out of the window raise the embedded engine's events, and leave the cache")
    func windowChangesMatchTheEmbeddedEngine() async throws {
        try await RemoteClientTests.withClients(2) { _, clients in
            let (db, writer) = (clients[0], clients[1])
            let embedded = try manualDatabase()
            defer { embedded.close() }
            try writer.reference(withPath: "items").queueSetValue(Self.items(0..<30))
            try embedded.reference(withPath: "items").queueSetValue(Self.items(0..<30))
            try writer.settle()
            embedded.drain()
            // The same observers on both.
            struct Event: Equatable {
                var type: DataEventType
                var key: String?
                var previous: String?
                var value: JSONValue
            }
            func observe(_ database: Database, _ log: Collected<Event>) {
                let query = database.reference(withPath: "items").queryOrdered(byChild: "n").queryLimited(toFirst: 3)
                for type in [DataEventType.childAdded, .childRemoved, .childChanged, .childMoved, .value] {
                    query.observe(
                        type,
                        andPreviousSiblingKeyWith: { snapshot, previous in
                            log.append(Event(type: type, key: snapshot.key, previous: previous, value: snapshot.exportJSON))
                        })
                }
            }
            let remoteLog = Collected<Event>()
            let embeddedLog = Collected<Event>()
            observe(db, remoteLog)
            observe(embedded, embeddedLog)
            try db.settle()
            embedded.drain()
            // Writes by another client: into the window, out of it, reordering it, removals.
            let steps: [(String, Any?)] = [
                ("items/k050", ["n": -1]), ("items/k001/n", 100), ("items/k000", nil), ("items/k002/n", 1),
                ("items/k050", nil), ("items/k003/extra", true),
            ]
            for (path, value) in steps {
                try writer.reference(withPath: path).queueSetValue(value)
                try embedded.reference(withPath: path).queueSetValue(value)
                try writer.settle()
                embedded.drain()
                // The server's pushes arrive after the writer's acknowledgement, in their own time.
                try db.drain(until: "the events of setting \(path)") { remoteLog.items.count >= embeddedLog.items.count }
                try db.settle()
                #expect(remoteLog.items == embeddedLog.items, "after setting \(path)")
            }
            #expect(embeddedLog.items.count > 20)
            // The cache holds the window and its margin (13 children); k000 and k050, gone from the
            // server, are not among them.
            let cached = Self.keys(try Self.cached(db, "items"))
            #expect(cached.count == 13)
            #expect(!cached.contains("k000") && !cached.contains("k050") && !cached.contains("k001"))
        }
    }

    @Test("getData of a query reads the server's window; keepSynced keeps it cached; a query let go leaves nothing behind")
    func getDataKeepSyncedAndRelease() async throws {
        try await Self.withItems(0..<50) { db in
            let query = db.reference(withPath: "items").queryLimited(toFirst: 3)
            let read = Collected<JSONValue>()
            query.getData { _, snapshot in read.append(snapshot?.exportJSON ?? .null) }
            try db.drain(until: "the query's getData") { !read.items.isEmpty }
            #expect(Self.keys(read.items[0]) == ["k000", "k001", "k002"])
            #expect(try Self.cached(db, "items") == .null, "a one-shot query read caches nothing")
            try db.settle()
            query.keepSynced(true)
            try db.settle()
            #expect(Self.keys(try Self.cached(db, "items")) == (0..<13).map { String(format: "k%03d", $0) })
            try db.settle()
            query.keepSynced(false)
            try db.settle()
            #expect(try Self.cached(db, "items") == .null, "the window left with its last user")
            try db.settle()
            // An observer removed does the same.
            let handle = db.reference(withPath: "items").queryOrderedByKey().queryStarting(atValue: "k045").observe(.value) { _ in }
            try db.settle()
            #expect(Self.keys(try Self.cached(db, "items")) == (45..<50).map { String(format: "k%03d", $0) })
            try db.settle()
            db.reference(withPath: "items").removeObserver(withHandle: handle)
            try db.settle()
            #expect(try Self.cached(db, "items") == .null)
        }
    }

    @Test("a query on a child the rules declare no .indexOn for gets the server's no_index warning, logged as the SDKs log it")
    func unindexedQueriesAreWarnedAbout() async throws {
        let rules = #"{"rules": {".read": true, ".write": true, "indexed": {".indexOn": ["n"]}}}"#
        let log = CapturedLog()
        try await RemoteClientTests.withServer(rules: rules) { url in
            let db = try Database.remoteForTest(url) { configuration in
                configuration.logger = Logger(label: "canopy.tests.queries") { _ in log.handler }
            }
            defer { db.close() }
            func warnings() -> [String] { log.messages.withLock { $0.filter { $0.0 == .warning }.map(\.1) } }
            for location in ["indexed", "plain"] {
                db.reference(withPath: location).queryOrdered(byChild: "n").queryLimited(toFirst: 1).observe(.value) { _ in }
                db.reference(withPath: location).queryOrderedByKey().queryLimited(toFirst: 1).observe(.value) { _ in }
            }
            try db.settle()
            #expect(
                warnings() == [
                    #"canopy: Using an unspecified index. Your data will be downloaded and filtered on the client. Consider adding ".indexOn": "n" at /plain to your security rules for better performance."#
                ])
        }
    }

    @Test("a query rule that refuses the margin gets the query asked for exactly; one that refuses the query cancels it")
    func aRuleOnTheLimitGetsTheExactQuery() async throws {
        let rules = #"{"rules": {".write": true, "items": {".read": "query.limitToFirst <= 3"}}}"#
        try await RemoteClientTests.withServer(rules: rules) { url in
            let admin = try Database.remoteForTest(url) { $0.authToken = RemoteClientTests.adminToken }
            defer { admin.close() }
            try admin.reference(withPath: "items").queueSetValue(Self.items(0..<20))
            try admin.settle()
            let db = try Database.remoteForTest(url)
            defer { db.close() }
            let windows = Collected<[String]>()
            let cancelled = Collected<String>()
            db.reference(withPath: "items").queryLimited(toFirst: 3).observe(.value) { windows.append(Self.keys($0.exportJSON)) }
            db.reference(withPath: "items").queryLimited(toFirst: 4).observe(
                .value, with: { _ in }, withCancel: { cancelled.append(($0 as? DatabaseError).map { "\($0.code)" } ?? "\($0)") })
            try db.settle()
            #expect(windows.items == [["k000", "k001", "k002"]])
            #expect(cancelled.items == ["\(DatabaseError.Code.permissionDenied)"])
            #expect(Self.keys(try Self.cached(db, "items")) == ["k000", "k001", "k002"], "no margin was sent")
        }
    }

    @Test("with a persistent cache, a query observed before a restart shows its window at once offline")
    func aPersistedQueryShowsOffline() async throws {
        try await RemoteClientTests.withClients(1) { url, clients in
            let writer = clients[0]
            try writer.reference(withPath: "items").queueSetValue(Self.items(0..<20))
            try writer.settle()
            let directory = TemporaryDirectory("canopy-remote-query-cache")
            let persistent: (inout Database.Configuration) -> Void = { $0.persistencePath = directory.path }
            try Database.remoteForTest(url, configure: persistent).closing { db in
                let windows = Collected<[String]>()
                db.reference(withPath: "items").queryLimited(toLast: 2).observe(.value) { windows.append(Self.keys($0.exportJSON)) }
                try db.settle()
                #expect(windows.items == [["k018", "k019"]])
            }
            try Database.remoteForTest(url, configure: persistent).closing { db in
                db.goOffline()
                let windows = Collected<[String]>()
                let other = Collected<[String]>()
                db.reference(withPath: "items").queryLimited(toLast: 2).observe(.value) { windows.append(Self.keys($0.exportJSON)) }
                db.reference(withPath: "items").queryLimited(toFirst: 2).observe(.value) { other.append(Self.keys($0.exportJSON)) }
                db.drain()
                #expect(windows.items == [["k018", "k019"]], "the cached window, at once")
                #expect(other.items.isEmpty, "a query never answered waits for the server")
                db.goOnline()
                try db.settle()
                #expect(windows.items == [["k018", "k019"]])
                #expect(other.items == [["k000", "k001"]])
            }
        }
    }
}
