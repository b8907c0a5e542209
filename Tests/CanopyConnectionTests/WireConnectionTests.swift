import CanopyConnection
import CanopyCore
import CanopyServer
import CanopyWire
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// A connection against a live in-process server on loopback.
@Suite("WebSocket connection")
struct WireConnectionTests {
    static let posts = DatabasePath(["posts"])

    static func open(_ port: Int, _ log: EventLog, headers: [(String, String)] = []) throws -> WireConnection {
        WireConnection.open(
            url: try DatabaseURL("http://127.0.0.1:\(port)?ns=test"), lastSession: nil, headers: headers, logger: testLogger,
            handler: log.handler)
    }

    /// Opens a connection to `port`, with an iterator of its events from the first.
    static func open(_ port: Int) throws -> (WireConnection, AsyncStream<WireConnection.Event>.Iterator) {
        let log = EventLog()
        let events = log.stream.makeAsyncIterator()
        return (try Self.open(port, log), events)
    }

    /// Opens a connection to `port` and waits for its hello.
    static func connect(_ port: Int) async throws -> (WireConnection, AsyncStream<WireConnection.Event>.Iterator) {
        let (connection, iterator) = try Self.open(port)
        var events = iterator
        guard case .ready? = await events.next() else { throw Failure("no hello") }
        return (connection, events)
    }

    static func json(_ text: String) throws -> Node {
        var converter = try ValueConverter(function: "test", location: [])
        return try converter.convert(try JSONValue(parsing: text)).node
    }

    @Test("hello, listen, writes both ways, a split value both ways, then exactly one close")
    func conversation() async throws {
        try await withServer { port in
            let (connection, iterator) = try Self.open(port)
            var events = iterator
            // Sent before the hello: queued, then sent in order.
            #expect(connection.send(.put(id: 1, path: DatabasePath(["posts", "p1"]), data: Array(#"{"title":"a"}"#.utf8))))
            guard case .ready(let hello)? = await events.next() else { throw Failure("no hello") }
            #expect(hello.version == "5" && !hello.session.isEmpty && hello.host == "127.0.0.1:\(port)")
            guard case .message(.response(1, "ok", _))? = await events.next() else { throw Failure("no ok for the put") }

            #expect(connection.send(.listen(id: 2, path: Self.posts)))
            guard case .message(.put(Self.posts, let data, nil))? = await events.next() else { throw Failure("no data push") }
            #expect(data == (try Self.json(#"{"p1":{"title":"a"}}"#)))
            guard case .message(.response(2, "ok", _))? = await events.next() else { throw Failure("no ok for the listen") }

            // 40,000 characters: split into frames by the client, and by the server on the way back.
            let big = String(repeating: "ü", count: 40_000)
            #expect(connection.send(.put(id: 3, path: DatabasePath(["posts", "p2"]), data: Node.leaf(.string(big)).wireJSON)))
            guard case .message(.put(let path, let pushed, nil))? = await events.next() else { throw Failure("no push of the big value") }
            #expect(Self.posts.appending(ChildKey("p2")) == path || path == Self.posts)
            #expect(pushed == .leaf(.string(big)) || pushed.child(ChildKey("p2")) == .leaf(.string(big)))
            guard case .message(.response(3, "ok", _))? = await events.next() else { throw Failure("no ok for the big put") }

            connection.close()
            connection.close()
            guard case .closed? = await events.next() else { throw Failure("no close") }
            #expect(await events.next() == nil)
            #expect(!connection.send(.unauth(id: 4)))
        }
    }

    @Test("a merge, a get and a ping are answered")
    func getAndPing() async throws {
        try await withServer { port in
            let (connection, iterator) = try await Self.connect(port)
            var events = iterator
            connection.send(.merge(id: 1, path: Self.posts, members: [(["a", "b"], Array("1".utf8)), (["c"], Array(#""x""#.utf8))]))
            guard case .message(.response(1, "ok", _))? = await events.next() else { throw Failure("no ok for the merge") }
            connection.send(.get(id: 2, path: Self.posts))
            guard case .message(.response(2, "ok", let value))? = await events.next() else { throw Failure("no get") }
            #expect(value == (try Self.json(#"{"a":{"b":1},"c":"x"}"#)))
            connection.send(.ping)
            guard case .message(.pong)? = await events.next() else { throw Failure("no pong") }
            connection.close()
            guard case .closed? = await events.next() else { throw Failure("no close") }
        }
    }

    @Test("with an admin token: the token is accepted, a wrong one refused")
    func adminAuth() async throws {
        try await withServer({ $0.authToken = "s3cret" }) { port in
            let (connection, iterator) = try await Self.connect(port)
            var events = iterator
            connection.send(.put(id: 1, path: Self.posts, data: Array("1".utf8)))
            guard case .message(.response(1, let denied, _))? = await events.next() else { throw Failure("no answer") }
            #expect(denied != "ok")
            connection.send(.auth(id: 2, credential: "wrong"))
            guard case .message(.response(2, let refused, _))? = await events.next() else { throw Failure("no auth answer") }
            #expect(refused != "ok")
            // The server may drop the connection after a refused credential; start again.
            connection.close()
            let (second, iterator2) = try await Self.connect(port)
            var events2 = iterator2
            second.send(.auth(id: 1, credential: "s3cret"))
            second.send(.put(id: 2, path: Self.posts, data: Array("1".utf8)))
            guard case .message(.response(1, "ok", _))? = await events2.next() else { throw Failure("admin token refused") }
            guard case .message(.response(2, "ok", _))? = await events2.next() else { throw Failure("admin write refused") }
            second.close()
            guard case .closed? = await events2.next() else { throw Failure("no close") }
        }
    }

    @Test("the server going away closes the connection")
    func serverShutdown() async throws {
        let log = EventLog()
        let connection = try await withServer { port in
            let connection = try Self.open(port, log)
            var events = log.stream.makeAsyncIterator()
            guard case .ready? = await events.next() else { throw Failure("no hello") }
            return connection
        }
        var events = log.stream.makeAsyncIterator()
        guard case .closed? = await events.next() else { throw Failure("no close after the server stopped") }
        #expect(await events.next() == nil)
        #expect(!connection.send(.unauth(id: 1)))
    }

    @Test("a closed port closes at once")
    func closedPort() async throws {
        let port = try await withServer { $0 }  // free, and nothing listens once the server stopped
        let log = EventLog()
        var events = log.stream.makeAsyncIterator()
        let connection = try Self.open(port, log)
        guard case .closed(let reason)? = await events.next() else { throw Failure("no close") }
        #expect(reason.contains("failed"))
        #expect(await events.next() == nil)
        #expect(!connection.send(.unauth(id: 1)))
    }

    @Test("a server that never says hello: closed after the connect timeout")
    func noHello() async throws {
        // Accepts TCP connections and never answers; closes them when the test is done.
        let accepted = Mutex<[any Channel]>([])
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                accepted.withLock { $0.append(channel) }
                return channel.eventLoop.makeSucceededVoidFuture()
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(channel.localAddress?.port)
        let log = EventLog()
        var events = log.stream.makeAsyncIterator()
        let connection = WireConnection.open(
            url: try DatabaseURL("http://127.0.0.1:\(port)?ns=test"), lastSession: "old", connectTimeout: .milliseconds(300),
            logger: testLogger,
            handler: log.handler)
        guard case .closed(let reason)? = await events.next() else { throw Failure("no close") }
        #expect(reason.contains("no hello"))
        #expect(await events.next() == nil)
        connection.close()
        for child in accepted.withLock({ $0 }) { try? await child.close() }
        try await channel.close()
    }

    @Test("closing before the hello gives one close")
    func closeAtOnce() async throws {
        try await withServer { port in
            let (connection, iterator) = try Self.open(port)
            var events = iterator
            connection.close()
            guard case .closed(let reason)? = await events.next() else { throw Failure("no close") }
            #expect(reason == "closed by the client")
            #expect(await events.next() == nil)
        }
    }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
