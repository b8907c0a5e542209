import CanopyCore
import CanopyRemote
import CanopyServer
import CanopyTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// `Database(url:)` follows the server's reset (`r`): it reconnects at once to the host it names,
/// with its queued writes and listens, and keeps using that host; a chain of resets is followed;
/// a redirect loop ends with a logged error.
@Suite("Database(url:): resets (redirects)", .serialized)
struct RemoteRedirectTests {
    /// A remote database at `url` whose retries wait 30 to 60 s (a minute, with jitter).
    static func database(_ url: String) throws -> Database {
        try Database.remoteForTest(url) { configuration in
            configuration.minimumRetryDelay = .seconds(60)
            configuration.maximumRetryDelay = .seconds(60)
        }
    }

    /// Settles a ``database(_:)`` within 25 s: in time only if every reset was followed at
    /// once, not after a retry's wait.
    static func settleWithoutRetry(_ db: Database) throws {
        try db.settle(seconds: 25)
    }

    /// Runs `body`, on a thread of its own, with a ``database(_:)`` whose URL names a
    /// ``ResettingServer`` (sending its reset after a hello when `helloFirst`) in front of a
    /// ``TestServer``; closes the database after.
    static func throughResettingServer(
        helloFirst: Bool = false, _ body: @escaping @Sendable (TestServer, ResettingServer, Database) throws -> Void
    ) async throws {
        try await TestServer.serving { server in
            let redirector = ResettingServer(target: "127.0.0.1:\(server.port)", helloFirst: helloFirst)
            try await redirector.serving {
                try await onOwnThread {
                    let db = try Self.database("http://\(redirector.host)?ns=test")
                    defer { db.close() }
                    try body(server, redirector, db)
                }
            }
        }
    }

    @Test(
        "a reset instead of a hello: the client connects to the named host at once, its queued write and listen go there, and it stays there"
    )
    func followsAReset() async throws {
        try await Self.throughResettingServer { server, redirector, db in
            let seen = Collected<JSONValue>()
            db.reference(withPath: "items").observe(.value) { seen.append($0.exportJSON) }
            try db.reference(withPath: "items/a").queueSetValue(1)
            try Self.settleWithoutRetry(db)
            #expect(seen.items.last == ["a": 1])
            #expect(redirector.connections == 1)
            let checker = try Database.remoteForTest(server.url())
            defer { checker.close() }
            #expect(try read(checker, "items") == ["a": 1], "the write reached the server the reset named")
            // A reconnect goes straight to the named host.
            db.goOffline()
            db.goOnline()
            try db.settle()
            try db.reference(withPath: "items/b").queueSetValue(2)
            try db.settle()
            #expect(try read(checker, "items") == ["a": 1, "b": 2])
            #expect(seen.items.last == ["a": 1, "b": 2])
            #expect(redirector.connections == 1, "reconnects go to the host the reset named")
        }
    }

    @Test("a chain of resets is followed to its end; a redirect loop ends after 10 resets with a logged error, then back-off")
    func chainsAndLoops() async throws {
        try await TestServer.serving { server in
            let second = ResettingServer(target: "127.0.0.1:\(server.port)")
            let first = ResettingServer(target: "")
            try await second.serving {
                try await first.serving {
                    first.target.withLock { $0 = second.host }
                    try await onOwnThread {
                        let db = try Self.database("http://\(first.host)?ns=test")
                        defer { db.close() }
                        try db.reference(withPath: "chained").queueSetValue(true)
                        try Self.settleWithoutRetry(db)
                        #expect(first.connections == 1 && second.connections == 1)
                    }
                    // Now a loop: each names the other.
                    second.target.withLock { $0 = first.host }
                    let log = CapturedLog()
                    try await onOwnThread {
                        let db = try Database.remoteForTest("http://\(first.host)?ns=test") { configuration in
                            configuration.logger = Logger(label: "canopy.tests.redirects") { _ in log.handler }
                        }
                        defer { db.close() }
                        try db.drain(until: "the redirect loop to be reported") {
                            log.messages.withLock { $0.contains { $0.0 == .error } }
                        }
                        let errors = log.messages.withLock { $0.filter { $0.0 == .error }.map(\.1) }
                        // Ten followed, the eleventh refused.
                        #expect(errors.first?.contains("redirect loop: 11 resets in a row without a hello") == true, "\(errors)")
                        #expect(errors.first?.contains("\(second.host) → \(first.host)") == true, "\(errors)")
                    }
                    // One chain to the first (1 + 1), then the loop: 11 connections before the back-off.
                    #expect(first.connections + second.connections >= 2 + 11)
                }
            }
        }
    }

    @Test("a named host that does not answer sends the client back to its URL's host, with back-off")
    func unreachableTarget() async throws {
        // Nothing listens on port 1.
        let redirector = ResettingServer(target: "127.0.0.1:1")
        try await redirector.serving {
            let log = CapturedLog()
            try await onOwnThread {
                let db = try Database.remoteForTest("http://\(redirector.host)?ns=test") { configuration in
                    configuration.logger = Logger(label: "canopy.tests.redirects") { _ in log.handler }
                }
                defer { db.close() }
                try db.drain(until: "a second connection to the URL's host") { redirector.connections >= 2 }
                let messages = log.messages.withLock { $0.map(\.1) }
                #expect(
                    messages.contains { $0.contains("127.0.0.1:1, named by a reset, did not answer; back to \(redirector.host)") },
                    "\(messages)")
                #expect(!log.messages.withLock { $0.contains { $0.0 == .error } }, "not a loop: the target never said anything")
            }
        }
    }

    @Test("a reset on an open connection: requests in flight go to the named host, as after a reconnect")
    func resetAfterHello() async throws {
        try await Self.throughResettingServer(helloFirst: true) { server, redirector, db in
            let seen = Collected<JSONValue>()
            db.reference(withPath: "moved").observe(.value) { seen.append($0.exportJSON) }
            let outcome = Collected<String>()
            db.reference(withPath: "moved/a").setValue(1) { error, _ in outcome.append(error.map { "\($0)" } ?? "ok") }
            try Self.settleWithoutRetry(db)
            #expect(outcome.items == ["ok"], "the write was sent again to the named host and acknowledged there")
            #expect(seen.items.last == ["a": 1])
            #expect(redirector.connections == 1)
            let checker = try Database.remoteForTest(server.url())
            defer { checker.close() }
            #expect(try read(checker, "moved") == ["a": 1])
        }
    }
}
