import Canopy
import CanopyCore
import NIOCore
import Testing

@testable import CanopyServer

/// The subscription hub on a manually drained database (drained from the test's thread only):
/// what each kind of subscriber gets, and what is rendered for it.
@Suite("Subscription hub")
struct SubscriptionHubTests {
    /// A wire format that names what it renders and counts its renderings of updates.
    // @unchecked Sendable: used on the draining thread only.
    final class Format: SubscriptionRenderer, @unchecked Sendable {
        let name: String
        var renders: [String] = []

        init(_ name: String) {
            self.name = name
        }

        func initial(_ snapshot: SubscriptionSnapshot, of topic: Topic, tag: Int64?) -> [UInt8] {
            Array("\(self.name) initial \(topic.location.string)".utf8)
        }

        func render(_ update: SubscriptionUpdate, of topic: Topic) -> ByteBuffer? {
            if case .write(let write, let root) = update, write.change(at: topic.location, root: root) == nil { return nil }
            self.renders.append(topic.location.string)
            return ByteBuffer(string: "\(self.name) update \(topic.location.string)")
        }
    }

    /// A subscriber that records what it gets.
    // @unchecked Sendable: used on the draining thread only.
    final class Recorder: Subscriber, @unchecked Sendable {
        let id = SubscriberID.next()
        let identity = Identity.admin
        let renderer: any SubscriptionRenderer
        var got: [String] = []

        init(_ format: Format) {
            self.renderer = format
        }

        func deliver(initial: Rendering, tag: Int64?) {
            self.got.append(String(decoding: initial.bytes, as: UTF8.self) + (tag.map { " #\($0)" } ?? ""))
        }

        func deliver(_ frame: ByteBuffer, tag: Int64?) {
            self.got.append(String(buffer: frame) + (tag.map { " #\($0)" } ?? ""))
        }

        func revoked(_ subscription: Subscription) {
            self.got.append("revoked \(subscription.topic.location.string)")
        }

        func closed(reason: String?) {
            self.got.append("closed \(reason ?? "-")")
        }
    }

    static func database() throws -> Database {
        var configuration = Database.Configuration()
        configuration.loopMode = .manual
        return try Database.inMemory(configuration)
    }

    static func location(_ path: String) -> Subscription {
        Subscription(topic: Topic(location: DatabasePath(path.split(separator: "/").map { ChildKey(String($0)) }), kind: .location))
    }

    /// Runs `body` on the loop, drained here.
    static func onLoop(_ db: Database, _ body: @escaping @Sendable (LoopAccess) -> Void) {
        #expect(db.onLoop(body))
        db.drain()
    }

    @Test("a write is rendered once per format for the subscribers of the locations it changes, and not at all elsewhere")
    func locations() throws {
        let db = try Self.database()
        defer { db.close() }
        let hub = SubscriptionHub(database: db)
        let sse = Format("sse")
        let wire = Format("wire")
        let a1 = Recorder(sse)
        let a2 = Recorder(sse)
        let a3 = Recorder(wire)
        let b = Recorder(sse)
        Self.onLoop(db) { access in
            for subscriber in [a1, a2, a3] {
                #expect(hub.subscribe(subscriber, to: Self.location("a"), limit: 1 << 20, access: access) == .added)
            }
            #expect(hub.subscribe(b, to: Self.location("b"), limit: 1 << 20, access: access) == .added)
            #expect(hub.subscribe(b, to: Self.location("c/d"), limit: 4, access: access) == .tooLarge)
        }
        try db.reference(withPath: "a/x").queueSetValue(1)
        db.drain()
        #expect(sse.renders == ["/a"] && wire.renders == ["/a"])
        #expect(a1.got == ["sse initial /a", "sse update /a"] && a2.got == a1.got)
        #expect(a3.got == ["wire initial /a", "wire update /a"])
        #expect(b.got == ["sse initial /b"])

        // Unsubscribed: nothing more, and its format renders nothing when no one else has it.
        Self.onLoop(db) { access in
            hub.unsubscribe(a3, from: Self.location("a"), access: access)
            hub.unsubscribe(a3, from: Self.location("a"), access: access)
        }
        try db.reference(withPath: "a/y").queueSetValue(2)
        db.drain()
        #expect(wire.renders == ["/a"] && sse.renders == ["/a", "/a"])
        #expect(a3.got.count == 2 && a1.got.last == "sse update /a")
        // The database's follower refers to the hub unowned: it lives as long as the writes.
        withExtendedLifetime(hub) {}
    }

    @Test("subscribers of one query share its listener, each under its tag; revoking tells them; closing ends everything")
    func queries() throws {
        let db = try Self.database()
        defer { db.close() }
        try db.reference(withPath: "s").queueSetValue(["a": 1, "b": 2, "c": 3])
        db.drain()
        let hub = SubscriptionHub(database: db)
        let format = Format("f")
        let first = Recorder(format)
        let second = Recorder(format)
        let params = QueryParams(index: .value, limit: .last(2))
        let topic = Topic(location: DatabasePath([ChildKey("s")]), kind: .query(params))
        Self.onLoop(db) { access in
            #expect(hub.subscribe(first, to: Subscription(topic: topic, tag: 1), limit: 1 << 20, access: access) == .added)
            #expect(hub.subscribe(second, to: Subscription(topic: topic, tag: 2), limit: 1 << 20, access: access) == .added)
            #expect(hub.subscribe(second, to: Self.location("s"), limit: 1 << 20, access: access) == .added)
        }
        try db.reference(withPath: "s/d").queueSetValue(4)
        db.drain()
        #expect(format.renders == ["/s", "/s"], "once for the query, once for the location")
        #expect(first.got == ["f initial /s #1", "f update /s #1"])
        #expect(second.got.sorted() == ["f initial /s", "f initial /s #2", "f update /s", "f update /s #2"])

        Self.onLoop(db) { access in
            hub.revoke(access: access) { subscriber, subscription in subscriber === first || subscription.tag == nil }
        }
        #expect(first.got.last == "revoked /s" && second.got.last == "revoked /s")
        try db.reference(withPath: "s/e").queueSetValue(5)
        db.drain()
        #expect(first.got.count == 3 && second.got.last == "f update /s #2")

        // Closing ends every subscription (closeAll tells the subscribers it returns) and takes
        // no new ones.
        Self.onLoop(db) { access in
            let subscribers = hub.close(access: access)
            #expect(subscribers.count == 1 && subscribers.first === second)
            #expect(hub.allSubscriptions.isEmpty)
            #expect(hub.subscribe(first, to: Self.location("s"), limit: 1 << 20, access: access) == .closed)
        }
        try db.reference(withPath: "s/f").queueSetValue(6)
        db.drain()
        #expect(second.got.last == "f update /s #2" && second.got.count == 6, "nothing after the close")
    }
}
