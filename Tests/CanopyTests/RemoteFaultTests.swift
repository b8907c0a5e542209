import Canopy
import CanopyTestSupport
import Foundation
import Testing

/// Remote databases connected through the tests' `FaultProxy`, checked against the server's data
/// read by an independent client.
@Suite("A remote database through network faults", .serialized)
struct RemoteFaultTests {
    @Test("connections dropped mid-stream: every write delivered once, every completion once")
    func dropMidStream() async throws {
        try await withProxiedClient(namespace: "drop") { server, proxy, db in
            try db.settle()
            let items = db.reference(withPath: "items")
            let completions = CompletionTally()
            var expected: [String: JSONValue] = [:]
            for n in 0..<200 {
                let child = items.childByAutoId()
                expected[child.key!] = .int(Int64(n))
                child.setValue(n) { error, _ in completions.record(n, error) }
                if n % 40 == 39 {
                    // Cut while the batch is in flight: some of it acknowledged, the rest not.
                    try db.drain(until: "a write of the batch acknowledged") { completions.count > n - 39 }
                    proxy.dropAll()
                }
            }
            try db.settle()
            #expect(completions.outcomes == (0..<200).map { _ in ["ok"] })
            #expect(try serverJSON(server.url(namespace: "drop"), at: "items") == .object(expected))
            #expect(try localJSON(db, at: "items") == .object(expected))
            #expect(proxy.connectionsAccepted >= 6)  // the first connection and one after each drop
        }
    }

    @Test("a stall: local events at once, nothing on the server until un-stalled, then each write once")
    func stall() async throws {
        try await withProxiedClients(namespace: "stall") { server, proxy, writer, reader in
            let writerLog = ChildLog(writer.reference(withPath: "chat"), [.childAdded, .childChanged, .childRemoved])
            let readerLog = ChildLog(reader.reference(withPath: "chat"), [.childAdded, .childChanged, .childRemoved])
            try writer.settle()
            try reader.settle()
            try writer.reference(withPath: "chat/m1").queueSetValue("before")
            try writer.settle()
            try reader.drain(until: "the first message") { readerLog.events.count == 1 }

            proxy.stall(true)
            let completions = CompletionTally()
            writer.reference(withPath: "chat/m2").setValue("during") { error, _ in completions.record(0, error) }
            writer.reference(withPath: "chat/m1").setValue("changed") { error, _ in completions.record(1, error) }
            writer.drain()
            let during = ["child_added m2 \"during\" prev=m1", "child_changed m1 \"changed\""]
            #expect(writerLog.events == ["child_added m1 \"before\""] + during)
            try waitUntil("the writes to reach the stalled proxy") {
                writer.drain()
                return proxy.heldBytes > 0
            }
            #expect(try serverJSON(server.url(namespace: "stall"), at: "chat") == ["m1": "before"])
            try reader.settle()
            #expect(readerLog.events == ["child_added m1 \"before\""])
            #expect(completions.count == 0)

            proxy.stall(false)
            try writer.settle()
            try reader.drain(until: "the stalled writes") { readerLog.events.count == 3 }
            try reader.settle()
            #expect(readerLog.events == ["child_added m1 \"before\""] + during)
            #expect(writerLog.events == ["child_added m1 \"before\""] + during)
            #expect(completions.outcomes == [["ok"], ["ok"]])
            #expect(try serverJSON(server.url(namespace: "stall"), at: "chat") == ["m1": "changed", "m2": "during"])
        }
    }

    @Test("writes held by a stalled connection that is then cut: sent again, each delivered once")
    func stallThenDrop() async throws {
        try await withProxiedClient(namespace: "held") { server, proxy, db in
            try db.settle()
            proxy.stall(true)
            let completions = CompletionTally()
            var expected: [String: JSONValue] = [:]
            for n in 0..<20 {
                db.reference(withPath: "queue/k\(n)").setValue(n) { error, _ in completions.record(n, error) }
                expected["k\(n)"] = .int(Int64(n))
            }
            try waitUntil("the writes to reach the stalled proxy") {
                db.drain()
                return proxy.heldBytes > 0
            }
            proxy.dropAll()  // the held bytes are discarded
            proxy.stall(false)
            try db.settle()
            #expect(completions.outcomes == (0..<20).map { _ in ["ok"] })
            #expect(try serverJSON(server.url(namespace: "held"), at: "queue") == .object(expected))
        }
    }

    @Test("a write queued while cut off wins over another client's earlier one, with no flicker")
    func lastWriteWinsAfterReconnect() async throws {
        try await withProxiedClients(namespace: "lww") { server, proxy, a, b in
            try b.reference(withPath: "doc/title").queueSetValue("v0")
            try b.settle()
            let aLog = ChildLog(a.reference(withPath: "doc"), [.childChanged, .value])
            let bLog = ChildLog(b.reference(withPath: "doc"), [.childChanged])
            try a.settle()
            try b.settle()
            #expect(aLog.take() == ["value / {\"title\":\"v0\"}"])

            proxy.refuse(true)
            proxy.dropAll()
            try a.drain(until: "the client to see the drop") { !a.isRemoteSettled && proxy.openConnections == 0 }
            let completion = CompletionTally()
            a.reference(withPath: "doc/title").setValue("from A") { error, _ in completion.record(0, error) }
            a.drain()
            #expect(aLog.take() == ["child_changed title \"from A\"", "value / {\"title\":\"from A\"}"])
            try b.reference(withPath: "doc/title").queueSetValue("from B")
            try b.settle()

            proxy.refuse(false)
            try a.settle()
            try b.drain(until: "the queued write to reach the other client") { bLog.events.count >= 2 }
            try b.settle()
            #expect(aLog.take().isEmpty)  // the server's "from B" never showed over the pending write
            #expect(bLog.take() == ["child_changed title \"from B\"", "child_changed title \"from A\""])
            #expect(completion.outcomes == [["ok"]])
            #expect(try serverJSON(server.url(namespace: "lww"), at: "doc") == ["title": "from A"])
        }
    }

    @Test("a 25 ms delay each way: still exactly the oracle's events")
    func delay() async throws {
        try await withProxiedServer { server, proxy in
            proxy.delay(milliseconds: 25)
            let db = try Database.remoteForTest(proxy.url(namespace: "delay"))
            defer { db.close() }
            try EventModelTests.run(seed: 5, steps: 40, on: db) { try db.settle() }
        }
    }

    @Test("the connection cut at every third step, mid-write: still exactly the oracle's events")
    func dropsDuringModel() async throws {
        let seed: UInt64 = 6
        try await withProxiedClient(namespace: "dropmodel\(seed)") { _, proxy, db in
            var step = 0
            // 25 listeners added and 120 writes, each followed by a settle: over 45 cuts.
            try EventModelTests.run(seed: seed, steps: 120, on: db) {
                step += 1
                if step % 3 == 0 {
                    db.drain()  // the step's write is sent (or queued), perhaps answered
                    proxy.dropAll()
                }
                try db.settle()
            }
            #expect(proxy.connectionsAccepted > 45)
        }
    }

    @Test("observers resumed after a drop: exactly the events from the old view to the new data")
    func listenersResumed() async throws {
        try await withProxiedClients(namespace: "resume") { server, proxy, observer, writer in
            let before: JSONValue = ["a": 1, "b": 2, "c": ["x": 1], "e": 5]
            try writer.reference(withPath: "room").queueSetValue(before.anyValue)
            try writer.settle()

            let after: JSONValue = ["a": 1, "b": 20, "d": 4, "e": ["y": 2]]
            let embedded = try embeddedEvents(before: before, after: after)
            let log = ChildLog(observer.reference(withPath: "room"), ChildLog.allTypes)
            try observer.settle()
            #expect(log.take() == embedded.initial)

            proxy.refuse(true)
            proxy.dropAll()
            try observer.drain(until: "the observer to see the drop") { !observer.isRemoteSettled && proxy.openConnections == 0 }
            try writer.reference(withPath: "room").queueUpdateChildValues(["b": 20, "c": NSNull(), "d": 4, "e": ["y": 2]])
            try writer.settle()
            #expect(log.take().isEmpty)

            proxy.refuse(false)
            try observer.settle()
            #expect(log.take() == embedded.after)
            #expect(try localJSON(observer, at: "room") == after)

            // Resumed for good: the next change arrives once, and nothing else.
            try writer.reference(withPath: "room/f").queueSetValue(6)
            try writer.settle()
            try observer.drain(until: "the next change") { log.events.count >= 2 }
            try observer.settle()
            #expect(log.take() == ["child_added f 6 prev=e", "value / {\"a\":1,\"b\":20,\"d\":4,\"e\":{\"y\":2},\"f\":6}"])
        }
    }

    @Test("canopy serve killed (SIGKILL) mid-stream and restarted: acknowledged writes kept, queued ones delivered once")
    func serverKilledAndRestarted() async throws {
        try await onOwnThread {
            let directory = TemporaryDirectory("canopy-fault-kill")
            var serve = try ServeProcess(directory: directory.path)
            defer { serve.stop() }
            let proxy = try FaultProxy(target: serve.port)
            defer { proxy.stop() }
            let writer = try Database.remoteForTest(proxy.url(namespace: "kill"))
            let observer = try Database.remoteForTest(proxy.url(namespace: "kill"))
            defer {
                writer.close()
                observer.close()
            }
            let added = ChildLog(observer.reference(withPath: "log"), [.childAdded, .childRemoved])
            try writer.settle()
            try observer.settle()

            let log = writer.reference(withPath: "log")
            let completions = CompletionTally()
            var expected: [String: JSONValue] = [:]
            func write(_ n: Int) {
                let child = log.childByAutoId()
                expected[child.key!] = .int(Int64(n))
                child.setValue(n) { error, _ in completions.record(n, error) }
            }
            // 100 writes acknowledged (the restarted server must have them: they are not sent again),
            // then 100 more cut by the kill mid-stream, then 50 queued while the server is down.
            for n in 0..<100 { write(n) }
            try writer.settle()
            for n in 100..<200 { write(n) }
            try writer.drain(until: "a write of the second batch acknowledged") { completions.count > 100 }
            serve.kill9()
            for n in 200..<250 { write(n) }
            writer.drain()
            observer.drain()

            serve = try ServeProcess(directory: directory.path)
            proxy.retarget(serve.port)
            try writer.settle()
            try observer.settle()
            try observer.drain(until: "the observer to have every write") { added.events.count >= 250 }
            try observer.settle()

            #expect(completions.outcomes == (0..<250).map { _ in ["ok"] })
            let url = "http://127.0.0.1:\(serve.port)?ns=kill"
            #expect(try serverJSON(url, at: "log") == .object(expected))
            #expect(try localJSON(observer, at: "log") == .object(expected))
            // The observer saw each write added once, never removed (the restarted server's data
            // includes every acknowledged write).
            let keys = added.events.map { $0.split(separator: " ")[1] }
            #expect(added.events.allSatisfy { $0.hasPrefix("child_added ") })
            #expect(keys.count == 250 && Set(keys).count == 250)
        }
    }

    @Test("a persistent client closed offline and reopened: cache shown first, queued writes delivered once")
    func persistentQueueAcrossRestart() async throws {
        try await TestServer.serving { server in
            try await onOwnThread {
                let directory = TemporaryDirectory("canopy-fault-persist")
                let proxy = try FaultProxy(target: server.port)
                defer { proxy.stop() }
                let url = proxy.url(namespace: "persist")
                let persistent: (inout Database.Configuration) -> Void = { $0.persistencePath = directory.path }
                try Database.remoteForTest(server.url(namespace: "persist")).closing { seeder in
                    try seeder.reference(withPath: "items/seed").queueSetValue(0)
                    try seeder.settle()
                }

                var expectedItems: [String: JSONValue] = ["seed": 0]
                let closed = CompletionTally()
                try Database.remoteForTest(url, configure: persistent).closing { db in
                    let values = ChildLog(db.reference(withPath: "items"), [.value])
                    try db.settle()
                    #expect(values.take() == ["value / {\"seed\":0}"])
                    proxy.refuse(true)
                    proxy.dropAll()
                    try db.drain(until: "the client to see the drop") { !db.isRemoteSettled }
                    for n in 1...10 {
                        let child = db.reference(withPath: "items").childByAutoId()
                        child.setValue(n) { error, _ in closed.record(n - 1, error) }
                        expectedItems[child.key!] = .int(Int64(n))
                    }
                    db.drain()
                    #expect(values.events.count == 10)
                }
                // Closing told each write it is still queued (not lost), once.
                #expect(closed.outcomes.count == 10)
                #expect(closed.outcomes.allSatisfy { $0.count == 1 && $0[0].contains("stays queued in the persistent cache") })
                #expect(try serverJSON(server.url(namespace: "persist"), at: "items") == ["seed": 0])
                let expected = JSONValue.object(expectedItems)

                // Reopened with the connection stalled: the cache answers before the server does.
                proxy.stall(true)
                proxy.refuse(false)
                let accepted = proxy.connectionsAccepted
                try Database.remoteForTest(url, configure: persistent).closing { db in
                    let values = ChildLog(db.reference(withPath: "items"), [.value])
                    try db.drain(until: "the cached value") { !values.events.isEmpty }
                    #expect(values.events == ["value / \(expected.jsonString())"])
                    try db.drain(until: "the reopened client to connect") { proxy.connectionsAccepted > accepted }
                    proxy.stall(false)
                    try db.settle()
                    #expect(values.events == ["value / \(expected.jsonString())"])
                }
                #expect(try serverJSON(server.url(namespace: "persist"), at: "items") == expected)
            }
        }
    }
}

/// Runs `body` on a thread of its own (see `onOwnThread`) with a live test server and a fault
/// proxy in front of it; stops both after.
func withProxiedServer(_ body: @escaping @Sendable (TestServer, FaultProxy) throws -> Void) async throws {
    try await TestServer.serving { server in
        try await onOwnThread {
            let proxy = try FaultProxy(target: server.port)
            defer { proxy.stop() }
            try body(server, proxy)
        }
    }
}

/// `withProxiedServer` with a client of `namespace` connected through the proxy; closes it after.
func withProxiedClient(
    namespace: String, _ body: @escaping @Sendable (TestServer, FaultProxy, Database) throws -> Void
) async throws {
    try await withProxiedServer { server, proxy in
        let db = try Database.remoteForTest(proxy.url(namespace: namespace))
        defer { db.close() }
        try body(server, proxy, db)
    }
}

/// `withProxiedServer` with two clients of `namespace`: one through the proxy, one connected
/// directly; closes both after.
func withProxiedClients(
    namespace: String, _ body: @escaping @Sendable (TestServer, FaultProxy, _ proxied: Database, _ direct: Database) throws -> Void
) async throws {
    try await withProxiedServer { server, proxy in
        let proxied = try Database.remoteForTest(proxy.url(namespace: namespace))
        let direct = try Database.remoteForTest(server.url(namespace: namespace))
        defer {
            proxied.close()
            direct.close()
        }
        try body(server, proxy, proxied, direct)
    }
}

extension FaultProxy {
    /// The URL of `namespace` through the proxy.
    func url(namespace: String) -> String { "http://127.0.0.1:\(self.port)?ns=\(namespace)" }
}

extension Database {
    /// Runs `body` with the database, then closes it (also when `body` throws).
    func closing(_ body: (Database) throws -> Void) throws {
        defer { self.close() }
        try body(self)
    }
}

/// The server's data at `path`, read by a fresh client of its own (no cache, no listens).
func serverJSON(_ url: String, at path: String) throws -> JSONValue {
    let checker = try Database.remoteForTest(url)
    defer { checker.close() }
    try checker.settle()
    let answer = Locked<Result<JSONValue, FaultTestError>?>(nil)
    checker.reference(withPath: path).getData { error, snapshot in
        answer.withLock {
            $0 = error.map { .failure(FaultTestError("the checker's read failed: \($0)")) } ?? .success(snapshot?.exportJSON ?? .null)
        }
    }
    try checker.drain(until: "the checker's read of \(path)") { answer.value != nil }
    return try answer.value!.get()
}

/// What `db` shows at `path` (its cache, once complete there).
func localJSON(_ db: Database, at path: String) throws -> JSONValue {
    let answer = Locked<JSONValue?>(nil)
    db.reference(withPath: path).observeSingleEvent(of: .value) { snapshot in answer.withLock { $0 = snapshot.exportJSON } }
    try db.drain(until: "the value at \(path)") { answer.value != nil }
    return answer.value!
}

/// The events observers of every type at `/room` of an embedded database raise when it holds
/// `before` (`initial`), then when `/room` is set to `after` (`after`).
func embeddedEvents(before: JSONValue?, after: JSONValue) throws -> (initial: [String], after: [String]) {
    let db = try manualDatabase()
    defer { db.close() }
    if let before { try db.reference(withPath: "room").queueSetValue(before.anyValue) }
    let log = ChildLog(db.reference(withPath: "room"), ChildLog.allTypes)
    db.drain()
    let initial = log.take()
    try db.reference(withPath: "room").queueSetValue(after.anyValue)
    db.drain()
    return (initial, log.take())
}

/// Every completion of each write, by the write's number ("ok" or the error): a second call shows.
final class CompletionTally: Sendable {
    private let state = Locked<[Int: [String]]>([:])

    func record(_ n: Int, _ error: (any Error)?) {
        self.state.withLock { $0[n, default: []].append(error.map { "\($0)" } ?? "ok") }
    }

    /// The writes completed (once or more).
    var count: Int { self.state.value.count }

    /// The completions of writes 0, 1, … up to the highest completed.
    var outcomes: [[String]] {
        let state = self.state.value
        return (0..<((state.keys.max() ?? -1) + 1)).map { state[$0] ?? [] }
    }
}

/// The events observers at one location raise, as "type key value prev=…" lines.
final class ChildLog: Sendable {
    static let allTypes: [DataEventType] = [.childAdded, .childChanged, .childRemoved, .childMoved, .value]
    private let lines = Locked<[String]>([])

    init(_ ref: DatabaseReference, _ types: [DataEventType]) {
        let lines = self.lines
        for type in types {
            ref.observe(
                type,
                andPreviousSiblingKeyWith: { snapshot, previous in
                    var line = "\(type) \(snapshot.key.map { type == .value ? "/" : $0 } ?? "/") \(snapshot.exportJSON.jsonString())"
                    if let previous { line += " prev=\(previous)" }
                    lines.withLock { $0.append(line) }
                })
        }
    }

    var events: [String] { self.lines.value }

    /// The events so far, forgetting them.
    func take() -> [String] {
        self.lines.withLock { lines in
            defer { lines = [] }
            return lines
        }
    }
}
