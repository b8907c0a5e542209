import CanopyRemote
import CanopyServer
import CanopyTestSupport
import Foundation
import Testing

/// Values collected by callbacks on the thread that drains a database's loop.
final class Collected<Value>: @unchecked Sendable {  // touched only by the draining thread
    var items: [Value] = []
    func append(_ value: Value) { self.items.append(value) }
}

/// Reads `path` through `db` (a remote database in `.manual` mode) and returns the data, or throws
/// the read's error.
func read(_ db: Database, _ path: String) throws -> JSONValue {
    let result = Collected<Result<JSONValue, any Error>>()
    db.reference(withPath: path).getData { error, snapshot in
        result.append(error.map { .failure($0) } ?? .success(snapshot?.exportJSON ?? .null))
    }
    try db.drain(until: "getData of /\(path)") { !result.items.isEmpty }
    return try result.items[0].get()
}

@Suite("Database(url:): the Swift API against a server", .serialized)
struct RemoteClientTests {
    static let rules = #"""
        {"rules": {"open": {".read": true, ".write": true}, "locked": {".read": true}, "secret": {".read": false}}}
        """#
    static let adminToken = "remote-client-tests-admin"

    /// Runs `body` on its own thread with a server and its URL. With `rules` the server is guarded
    /// (rules plus an admin token) and the administrator opens the namespace first: on a guarded
    /// server only the administrator may have a namespace created.
    static func withServer(rules: String? = nil, _ body: @escaping @Sendable (String) throws -> Void) async throws {
        let configure: (inout ServerConfiguration) -> Void = { configuration in
            configuration.rules = rules
            if rules != nil { configuration.authToken = Self.adminToken }
        }
        try await TestServer.serving(configure) { server in
            let url = server.url()
            try await onOwnThread {
                if rules != nil {
                    let admin = try Database.remoteForTest(url) { $0.authToken = Self.adminToken }
                    defer { admin.close() }
                    try admin.reference(withPath: "open/created").queueSetValue(true)
                    try admin.settle()
                }
                try body(url)
            }
        }
    }

    /// ``withServer(rules:_:)`` with `count` remote databases on it (closed after `body`).
    static func withClients(
        _ count: Int, rules: String? = nil, _ body: @escaping @Sendable (String, [Database]) throws -> Void
    ) async throws {
        try await Self.withServer(rules: rules) { url in
            let clients = try (0..<count).map { _ in try Database.remoteForTest(url) }
            defer { for client in clients { client.close() } }
            try body(url, clients)
        }
    }

    /// ``withServer(rules:_:)`` with one remote database on it (closed after `body`).
    static func withClient(rules: String? = nil, _ body: @escaping @Sendable (Database) throws -> Void) async throws {
        try await Self.withClients(1, rules: rules) { _, clients in try body(clients[0]) }
    }

    @Test("offline writes raise their events at once, queue up, and reach the server in order, once, on reconnect")
    func offlineQueue() async throws {
        try await Self.withClients(2) { url, clients in
            let (db, checker) = (clients[0], clients[1])
            let added = Collected<String>()
            let items = db.reference(withPath: "items")
            items.observe(.childAdded) { added.append($0.key ?? "") }
            try db.settle()
            db.goOffline()
            let connected = Collected<Bool>()
            db.reference(withPath: ".info/connected").observe(.value) { connected.append($0.value as? Bool ?? true) }
            db.drain()
            #expect(connected.items == [false])
            let completions = Collected<(Int, String?)>()
            for i in 0..<5 {
                items.child("k\(i)").setValue(i) { error, _ in completions.append((i, error.map { "\($0)" })) }
            }
            db.drain()
            #expect(added.items == ["k0", "k1", "k2", "k3", "k4"], "local events fire before the server has the writes")
            #expect(completions.items.isEmpty, "nothing is acknowledged while offline")
            #expect(try read(checker, "items") == .null)
            db.goOnline()
            try db.settle()
            #expect(completions.items.map(\.0) == [0, 1, 2, 3, 4])
            #expect(completions.items.allSatisfy { $0.1 == nil })
            #expect(try read(checker, "items") == ["k0": 0, "k1": 1, "k2": 2, "k3": 3, "k4": 4])
            #expect(added.items.count == 5, "the server's echo raises nothing more")
            #expect(connected.items == [false, true])
        }
    }

    @Test("offline, a set of a location never synced (or of a location above it) makes it complete: its observers see the local value")
    func offlineSetCompletesALocation() async throws {
        try await Self.withClients(1) { url, clients in
            let db = clients[0]
            db.goOffline()
            let room = Collected<JSONValue>()
            let message = Collected<JSONValue>()
            let other = Collected<JSONValue>()
            db.reference(withPath: "rooms/a").observe(.value) { room.append($0.exportJSON) }
            db.reference(withPath: "rooms/b/messages/m1").observe(.value) { message.append($0.exportJSON) }
            db.reference(withPath: "rooms/c").observe(.value) { other.append($0.exportJSON) }
            db.drain()
            #expect(room.items.isEmpty && message.items.isEmpty, "never synced: nothing to show yet")
            // A set of the whole location shows at once, as the SDKs show it.
            try db.reference(withPath: "rooms/a").queueSetValue(["title": "A"])
            // A set above a location completes it too (here through an update's entry).
            try db.reference(withPath: "rooms").queueUpdateChildValues(["b/messages": ["m1": "hi"]])
            // A priority alone, or a write below a location, does not.
            try db.reference(withPath: "rooms/c/x").queueSetValue(1)
            db.drain()
            #expect(room.items == [["title": "A"]])
            #expect(message.items == ["hi"])
            #expect(other.items.isEmpty, "a write below a location does not make it complete")
            // An observer added later sees it at once too.
            let later = Collected<JSONValue>()
            db.reference(withPath: "rooms/a/title").observe(.value) { later.append($0.exportJSON) }
            db.drain()
            #expect(later.items == ["A"])
            // Online: the server takes the writes; the completed locations raise nothing more.
            db.goOnline()
            try db.settle()
            #expect(room.items == [["title": "A"]] && message.items == ["hi"])
            #expect(other.items == [["x": 1]], "rooms/c shows once the server has answered its listen")
        }
    }

    @Test(
        "never connected (no server answers), a set above a location completes it for value, child and query observers, and for a child it leaves out; a removal shows null"
    )
    func neverConnectedSetCompletesALocation() async throws {
        try await onOwnThread {
            // Nothing listens on port 1: every connection attempt is refused.
            let db = try Database.remoteForTest("http://127.0.0.1:1?ns=test")
            defer { db.close() }
            let room = Collected<JSONValue>()
            let added = Collected<String>()
            let last = Collected<JSONValue>()
            let absent = Collected<JSONValue>()
            db.reference(withPath: "rooms/a").observe(.value) { room.append($0.exportJSON) }
            db.reference(withPath: "rooms/a/messages").observe(.childAdded) { added.append($0.key ?? "") }
            db.reference(withPath: "rooms/a/messages").queryOrderedByKey().queryLimited(toLast: 1).observe(.value) {
                last.append($0.exportJSON)
            }
            db.reference(withPath: "rooms/z").observe(.value) { absent.append($0.exportJSON) }
            db.drain()
            #expect(room.items.isEmpty && added.items.isEmpty && last.items.isEmpty && absent.items.isEmpty, "never synced")
            try db.reference(withPath: "rooms").queueSetValue(["a": ["title": "A", "messages": ["m1": "hi", "m2": "yo"]]])
            db.drain()
            #expect(room.items == [["title": "A", "messages": ["m1": "hi", "m2": "yo"]]])
            #expect(added.items == ["m1", "m2"])
            #expect(last.items == [["m2": "yo"]])
            #expect(absent.items == [.null], "the set of rooms says rooms/z holds nothing")
            try db.reference(withPath: "rooms/a").queueRemoveValue()
            db.drain()
            #expect(room.items.last == .null)
            #expect(last.items.last == .null)
        }
    }

    @Test("with a persistent cache, a queued set restored after a restart completes its location, still never connected")
    func restoredSetCompletesALocation() async throws {
        let directory = TemporaryDirectory("remote-cache")
        defer { directory.remove() }
        let cachePath = directory.file("cache")
        try await onOwnThread {
            do {
                let db = try Database.remoteForTest("http://127.0.0.1:1?ns=test") { $0.persistencePath = cachePath }
                try db.reference(withPath: "drafts/d1").queueSetValue(["text": "offline"])
                db.drain()
                db.close()
            }
            let db = try Database.remoteForTest("http://127.0.0.1:1?ns=test") { $0.persistencePath = cachePath }
            defer { db.close() }
            let seen = Collected<JSONValue>()
            db.reference(withPath: "drafts/d1/text").observe(.value) { seen.append($0.exportJSON) }
            db.drain()
            #expect(seen.items == ["offline"])
        }
    }

    @Test("with an acknowledgement timeout an unanswered write's completion gets disconnected, once; the write is still sent")
    func acknowledgementTimeout() async throws {
        try await Self.withServer { url in
            let db = try Database.remoteForTest(url) { $0.acknowledgementTimeout = .milliseconds(50) }
            let checker = try Database.remoteForTest(url)
            defer {
                db.close()
                checker.close()
            }
            try db.settle()
            db.goOffline()
            let outcomes = Collected<DatabaseError?>()
            db.reference(withPath: "late").setValue("sent later") { error, _ in outcomes.append(error as? DatabaseError) }
            try db.drain(until: "the timeout") { !outcomes.items.isEmpty }
            #expect(outcomes.items.first??.code == .disconnected)
            db.goOnline()
            try db.settle()
            #expect(try read(checker, "late") == "sent later")
            #expect(outcomes.items.count == 1, "the completion is called once")
        }
    }

    @Test("a write the rules refuse is reverted with the right events and its completion gets permission_denied")
    func refusedWriteReverts() async throws {
        try await Self.withClient(rules: Self.rules) { db in
            let values = Collected<JSONValue>()
            let locked = db.reference(withPath: "locked/x")
            let cancelled = Collected<String>()
            locked.observe(.value, with: { values.append($0.exportJSON) }, withCancel: { cancelled.append("\($0)") })
            try db.settle()
            #expect(cancelled.items.isEmpty)
            let outcome = Collected<DatabaseError?>()
            locked.setValue(["a": 1]) { error, _ in outcome.append(error as? DatabaseError) }
            try db.drain(until: "the refusal") { !outcome.items.isEmpty }
            #expect(values.items == [.null, ["a": 1], .null])
            #expect(outcome.items.first??.code == .permissionDenied)
            // The database goes on working.
            let allowed = Collected<DatabaseError?>()
            db.reference(withPath: "open/y").setValue(2) { error, _ in allowed.append(error as? DatabaseError) }
            try db.settle()
            #expect(allowed.items.count == 1 && allowed.items[0] == nil)
        }
    }

    @Test("a listen the server refuses calls the cancel block; a read there fails")
    func refusedListen() async throws {
        try await Self.withClient(rules: Self.rules) { db in
            let values = Collected<JSONValue>()
            let cancelled = Collected<DatabaseError?>()
            db.reference(withPath: "secret").observe(
                .value, with: { values.append($0.exportJSON) },
                withCancel: { error in
                    cancelled.append(error as? DatabaseError)
                })
            try db.drain(until: "the cancel block") { !cancelled.items.isEmpty }
            #expect(values.items.isEmpty)
            #expect(cancelled.items.first??.code == .permissionDenied)
            #expect(throws: DatabaseError.self) { try read(db, "secret") }
        }
    }

    @Test("a refused listen ends values() with the error")
    func refusedListenEndsValues() async throws {
        let configure: (inout ServerConfiguration) -> Void = { configuration in
            configuration.rules = Self.rules
            configuration.authToken = Self.adminToken
        }
        try await TestServer.serving(configure) { server in
            var admin = Database.Configuration()
            admin.authToken = Self.adminToken
            let adminDB = try Database(url: server.url(), configuration: admin)
            try await adminDB.reference(withPath: "open/created").setValue(true)
            adminDB.close()
            let db = try Database(url: server.url())  // its own loop thread: values() is consumed here
            defer { db.close() }
            var received = 0
            do {
                for try await _ in db.reference(withPath: "secret").values() { received += 1 }
                Issue.record("values() ended without an error")
            } catch let error as DatabaseError {
                #expect(error.code == .permissionDenied)
            }
            #expect(received == 0)
        }
    }

    @Test("ServerValue.timestamp is estimated with the server's clock offset, then the server's value replaces it")
    func serverTimestamp() async throws {
        try await Self.withServer { url in
            let skew: Int64 = 3_600_000
            let db = try Database.remoteForTest(url) { configuration in
                configuration.clock = { Int64(Date().timeIntervalSince1970 * 1000) - skew }
            }
            defer { db.close() }
            try db.settle()
            let offset = try read(db, ".info/serverTimeOffset")
            guard case .int(let measured) = offset else { throw WaitTimedOut("an integer offset, got \(offset)", seconds: 0) }
            #expect(abs(measured - skew) < 5_000)
            let seen = Collected<Int64>()
            let ref = db.reference(withPath: "stamped")
            ref.observe(.value) { if let n = ($0.value as? NSNumber)?.int64Value { seen.append(n) } }
            try db.settle()
            try ref.queueSetValue(ServerValue.timestamp())
            db.drain()
            let estimate = try #require(seen.items.first, "the local event comes first, with the estimate")
            try db.settle()
            let stored = try read(db, "stamped")
            guard case .int(let serverValue) = stored else { throw WaitTimedOut("an integer timestamp, got \(stored)", seconds: 0) }
            #expect(abs(estimate - serverValue) < 5_000)
            #expect(seen.items.last == serverValue, "the cache ends with the server's value")
        }
    }

    @Test("transactions from two clients at once never lose an update (datastale retries)")
    func concurrentTransactions() async throws {
        try await Self.withClients(2) { url, clients in
            let (a, b) = (clients[0], clients[1])
            let done = Collected<Bool>()
            for db in [a, b] {
                for _ in 0..<15 {
                    db.reference(withPath: "counter").runTransactionBlock(
                        { data in
                            data.value = ((data.value as? NSNumber)?.intValue ?? 0) + 1
                            return .success(withValue: data)
                        }, andCompletionBlock: { error, committed, _ in done.append(error == nil && committed) })
                }
            }
            try waitUntil("30 transactions") {
                a.drain()
                b.drain()
                return done.items.count == 30
            }
            #expect(done.items.allSatisfy { $0 })
            try a.settle()
            #expect(try read(b, "counter") == 30)
        }
    }

    @Test("multi-location transactions from two clients at once: every read checked at commit, no update lost; offline they fail")
    func multiLocationTransactions() async throws {
        try await Self.withClients(2) { url, clients in
            try clients[0].reference(withPath: "accounts").queueSetValue(["a": 100, "b": 0])
            for db in clients { try db.settle() }  // connected: a transaction fails while offline
            let outcomes = Collected<String?>()
            for db in clients {
                for _ in 0..<10 {
                    db.runTransaction(
                        { transaction -> Int in
                            let a = (try transaction.getData(db.reference(withPath: "accounts/a")).value as? NSNumber)?.intValue ?? 0
                            let b = (try transaction.getData(db.reference(withPath: "accounts/b")).value as? NSNumber)?.intValue ?? 0
                            try transaction.setValue(a - 1, for: db.reference(withPath: "accounts/a"))
                            try transaction.setValue(b + 1, for: db.reference(withPath: "accounts/b"))
                            return a - 1
                        },
                        completion: { result in
                            switch result {
                            case .success: outcomes.append(nil)
                            case .failure(let error): outcomes.append("\(error)")
                            }
                        })
                }
            }
            try waitUntil("20 transactions") {
                for db in clients { db.drain() }
                return outcomes.items.count == 20
            }
            #expect(outcomes.items.allSatisfy { $0 == nil }, "\(outcomes.items)")
            for db in clients { try db.settle() }
            let checker = try Database.remoteForTest(url)
            defer { checker.close() }
            #expect(try read(checker, "accounts") == ["a": 80, "b": 20])
            // Offline, a transaction fails at once (it needs the server).
            clients[0].goOffline()
            let offline = Collected<DatabaseError?>()
            clients[0].runTransaction({ _ in 1 }, completion: { offline.append($0.failure as? DatabaseError) })
            try clients[0].drain(until: "the offline transaction") { !offline.items.isEmpty }
            #expect(offline.items.first??.code == .disconnected)
        }
    }

    @Test("a multi-location transaction that reads where the rules forbid is refused and writes nothing")
    func multiLocationTransactionReadRefused() async throws {
        try await Self.withClient(rules: Self.rules) { db in
            try db.settle()
            // Reads `read`, writes `value` to open/y; the transaction's error, nil when committed.
            func transfer(reading read: String, writing value: Int) throws -> DatabaseError? {
                let outcome = Collected<DatabaseError?>()
                db.runTransaction(
                    { transaction -> Int in
                        _ = try transaction.getData(db.reference(withPath: read))
                        try transaction.setValue(value, for: db.reference(withPath: "open/y"))
                        return 0
                    }, completion: { outcome.append($0.failure as? DatabaseError) })
                try db.drain(until: "the transaction reading \(read)") { !outcome.items.isEmpty }
                #expect(outcome.items.count == 1)
                return outcome.items[0]
            }
            #expect(try transfer(reading: "open/x", writing: 1) == nil, "readable and writable: committed")
            #expect(try transfer(reading: "secret/x", writing: 2)?.code == .permissionDenied)
            try db.settle()
            #expect(try read(db, "open/y") == 1)
        }
    }

    @Test("a transaction's block sees the server's data (never a guess), an abort writes nothing, an invalid value fails it")
    func transactionSemantics() async throws {
        try await Self.withClients(2) { url, clients in
            let (writer, db) = (clients[0], clients[1])
            try writer.reference(withPath: "tx/counter").queueSetValue(41)
            try writer.settle()
            let seen = Collected<Int?>()
            let outcomes = Collected<(Bool, String?)>()
            db.reference(withPath: "tx/counter").runTransactionBlock(
                { data in
                    seen.append((data.value as? NSNumber)?.intValue)
                    data.value = ((data.value as? NSNumber)?.intValue ?? 0) + 1
                    return .success(withValue: data)
                }, andCompletionBlock: { error, committed, _ in outcomes.append((committed, error.map { "\($0)" })) })
            try db.drain(until: "the transaction") { outcomes.items.count == 1 }
            #expect(seen.items == [41], "one attempt, on the server's value")
            #expect(outcomes.items[0].0 && outcomes.items[0].1 == nil)
            db.reference(withPath: "tx/counter").runTransactionBlock(
                { _ in .abort() },
                andCompletionBlock: { error, committed, _ in
                    outcomes.append((committed, error.map { "\($0)" }))
                })
            db.reference(withPath: "tx/counter").runTransactionBlock(
                { data in
                    data.value = ["bad.key": 1]
                    return .success(withValue: data)
                }, andCompletionBlock: { error, committed, _ in outcomes.append((committed, error.map { "\($0)" })) })
            try db.drain(until: "two more transactions") { outcomes.items.count == 3 }
            #expect(outcomes.items[1].0 == false && outcomes.items[1].1 == nil, "aborted: not committed, no error")
            #expect(outcomes.items[2].0 == false && outcomes.items[2].1 != nil, "an invalid key fails the transaction")
            try db.settle()
            #expect(try read(writer, "tx/counter") == 42)
        }
    }

    @Test("onDisconnect operations run on the server when the client goes away; cancel removes them")
    func onDisconnect() async throws {
        try await Self.withServer { url in
            let checker = try Database.remoteForTest(url)
            defer { checker.close() }
            let client = try Database.remoteForTest(url)
            let acknowledged = Collected<String?>()
            let presence = client.reference(withPath: "presence/ada")
            presence.onDisconnectSetValue("offline") { error, _ in acknowledged.append(error.map { "\($0)" }) }
            client.reference(withPath: "presence/bob").onDisconnectRemoveValue { error, _ in acknowledged.append(error.map { "\($0)" }) }
            try presence.queueSetValue("online")
            try client.reference(withPath: "presence/bob").queueSetValue("online")
            client.reference(withPath: "presence/bob").cancelDisconnectOperations { error, _ in acknowledged.append(error.map { "\($0)" }) }
            try client.settle()
            #expect(acknowledged.items.count == 3 && acknowledged.items.allSatisfy { $0 == nil })
            #expect(try read(checker, "presence") == ["ada": "online", "bob": "online"])
            let seen = Collected<JSONValue>()
            checker.reference(withPath: "presence").observe(.value) { seen.append($0.exportJSON) }
            client.close()
            try checker.drain(until: "the onDisconnect write") { seen.items.last == ["ada": "offline", "bob": "online"] }
        }
    }

    @Test("an embedded database refuses onDisconnect operations with invalid_operation")
    func embeddedOnDisconnect() throws {
        let db = try manualDatabase()
        defer { db.close() }
        let outcome = Collected<DatabaseError?>()
        db.reference(withPath: "a").onDisconnectSetValue(1) { error, _ in outcome.append(error as? DatabaseError) }
        db.drain()
        #expect(outcome.items.first??.code == .invalidOperation)
    }

    @Test("getData: the server first; offline, the cache; offline with nothing cached, an error")
    func getData() async throws {
        try await Self.withClients(2) { url, clients in
            let (writer, db) = (clients[0], clients[1])
            try writer.reference(withPath: "docs/one").queueSetValue("v1")
            try writer.settle()
            #expect(try read(db, "docs/one") == "v1")
            try writer.reference(withPath: "docs/one").queueSetValue("v2")
            try writer.settle()
            #expect(try read(db, "docs/one") == "v2", "server first: not the cached v1")
            db.goOffline()
            db.drain()
            #expect(try read(db, "docs/one") == "v2", "offline: the cache")
            #expect(throws: DatabaseError.self) { try read(db, "docs/never") }
        }
    }

    @Test("a persistent cache keeps queued writes across a restart and shows cached data before the server answers")
    func persistence() async throws {
        let directory = TemporaryDirectory("remote-cache")
        defer { directory.remove() }
        let cachePath = directory.file("cache")
        try await Self.withServer { url in
            let checker = try Database.remoteForTest(url)
            defer { checker.close() }
            do {
                let db = try Database.remoteForTest(url) { $0.persistencePath = cachePath }
                let notes = db.reference(withPath: "notes")
                notes.observe(.value) { _ in }
                try notes.child("first").queueSetValue("from the server")
                try db.settle()
                db.goOffline()
                db.drain()
                try notes.child("queued").queueSetValue("written offline")
                db.drain()
                db.close()
            }
            #expect(try read(checker, "notes") == ["first": "from the server"])
            // Reopened against a server that is not there: the cache answers at once.
            do {
                let db = try Database.remoteForTest("http://127.0.0.1:1?ns=test") { $0.persistencePath = cachePath }
                let seen = Collected<JSONValue>()
                db.reference(withPath: "notes").observe(.value) { seen.append($0.exportJSON) }
                db.drain()
                #expect(seen.items == [["first": "from the server", "queued": "written offline"]])
                db.close()
            }
            // Reopened against the server: the queued write is delivered, once.
            let db = try Database.remoteForTest(url) { $0.persistencePath = cachePath }
            defer { db.close() }
            try db.settle()
            #expect(try read(checker, "notes") == ["first": "from the server", "queued": "written offline"])
        }
    }
}

@Suite("Database(url:): snapshot metadata", .serialized)
struct RemoteMetadataTests {
    @Test("a local write is pending until the server acknowledges it; includeMetadataChanges gets the acknowledgement")
    func pendingUntilAcknowledged() async throws {
        try await RemoteClientTests.withClient { db in
            let seen = Collected<(JSONValue, SnapshotMetadata)>()
            let ref = db.reference(withPath: "doc")
            ref.observe(.value, includeMetadataChanges: true) { seen.append(($0.exportJSON, $0.metadata)) }
            try db.settle()
            #expect(seen.items.map(\.0) == [.null])
            #expect(seen.items.last?.1 == SnapshotMetadata(hasPendingWrites: false, isFromCache: false))
            db.goOffline()
            db.drain()
            try ref.queueSetValue("draft")
            db.drain()
            #expect(seen.items.last?.0 == "draft")
            #expect(seen.items.last?.1.hasPendingWrites == true, "applied locally, not acknowledged")
            #expect(seen.items.last?.1.isFromCache == true, "offline: no live listen")
            let before = seen.items.count
            db.goOnline()
            try db.settle()
            #expect(seen.items.count > before, "metadata-only events when the listen is live again and the write is acknowledged")
            #expect(seen.items.last?.0 == "draft")
            #expect(seen.items.last?.1 == SnapshotMetadata(hasPendingWrites: false, isFromCache: false))
            #expect(seen.items.dropFirst(before).allSatisfy { $0.0 == "draft" }, "no data change, only metadata")
        }
    }
}

extension Result {
    /// The error of a failure, `nil` for a success.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
