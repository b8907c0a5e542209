import Canopy
import CanopyCore
import CanopyServer
import CanopyTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// A server over in-memory namespaces, bound to a free loopback port when run.
func makeServer(_ configure: (inout ServerConfiguration) -> Void = { _ in }) -> CanopyServer {
    var configuration = ServerConfiguration()
    configuration.port = 0
    configuration.keepAliveInterval = .seconds(30)
    // A full run is slow on two cores, and a client may still wait a while between connecting and
    // sending its request (the clients run on threads of their own, see `asTestClient`, but share
    // the cores with every other test). Nothing here tests the idle timeout (the load tests
    // against `canopy serve` do).
    configuration.idleTimeout = .seconds(600)
    configure(&configuration)
    return CanopyServer(configuration: configuration, store: NamespaceStore(directory: nil))
}

/// Runs `body` against a test client of a server made by ``makeServer(_:)`` (`setup`: `.router`
/// for the application alone, `.live` for a listening server), then closes its databases.
func withTestServer(
    _ setup: TestingSetup, _ configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
) async throws {
    let server = makeServer(configure)
    try await server.makeApplication().test(setup) { client in try await body(client) }
    await server.store.close()
}

/// Runs `body` with `server` serving on a free loopback port; shuts it down after.
func withLiveServer<T: Sendable>(_ server: CanopyServer, _ body: @Sendable (Int) async throws -> T) async throws -> T {
    try await asTestClient { try await server.serving(on: testServerExecutor, body) }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func json(_ text: String) throws -> JSONValue {
    var builder = JSONValueBuilder()
    return try JSONParser().parse(text, into: &builder)
}

func json(_ buffer: ByteBuffer) throws -> JSONValue {
    try json(String(buffer: buffer))
}

func body(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

/// Fails with a message after `seconds` unless `body` finished.
func within<T: Sendable>(_ seconds: Double = 10, _ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            return nil
        }
        let first = try await group.next()!
        group.cancelAll()
        guard let value = first else { throw TestFailure("timed out after \(seconds) s waiting for \(what)") }
        return value
    }
}

// MARK: - A raw loopback HTTP client

/// One HTTP/1.1 connection over a real socket: requests written by hand, responses parsed by
/// hand, so that the tests see exactly the bytes the server sends (headers, chunking, LF).
final class RawConnection: Sendable {
    let channel: any Channel
    private let reader: IteratorBox
    private let pending = Mutex<[UInt8]>([])

    /// When the connection was made, and how it ended (for failure messages).
    private let opened = ContinuousClock.now
    private let ending: Locked<String?>

    private final class Handler: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let continuation: AsyncStream<ByteBuffer>.Continuation
        let ending: Locked<String?>
        init(_ continuation: AsyncStream<ByteBuffer>.Continuation, ending: Locked<String?>) {
            self.continuation = continuation
            self.ending = ending
        }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            self.continuation.yield(self.unwrapInboundIn(data))
        }
        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            self.ending.withLock { $0 = $0 ?? "\(error)" }
            context.fireErrorCaught(error)
        }
        func channelInactive(context: ChannelHandlerContext) {
            self.ending.withLock { $0 = $0 ?? "closed" }
            self.continuation.finish()
        }
    }

    static func connect(port: Int, autoRead: Bool = true, receiveBuffer: Int? = nil) async throws -> RawConnection {
        let (stream, continuation) = AsyncStream<ByteBuffer>.makeStream()
        let ending = Locked<String?>(nil)
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.autoRead, value: autoRead)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Handler(continuation, ending: ending))
                }
            }
        if let receiveBuffer {
            bootstrap = bootstrap.channelOption(.socketOption(.so_rcvbuf), value: SocketOptionValue(receiveBuffer))
        }
        let channel = try await bootstrap.connect(host: "127.0.0.1", port: port).get()
        return RawConnection(channel: channel, inbox: stream, ending: ending)
    }

    // @unchecked Sendable: a connection has one reader at a time (each test reads sequentially).
    private final class IteratorBox: @unchecked Sendable {
        var iterator: AsyncStream<ByteBuffer>.Iterator
        init(_ iterator: AsyncStream<ByteBuffer>.Iterator) { self.iterator = iterator }
    }

    private init(channel: any Channel, inbox: AsyncStream<ByteBuffer>, ending: Locked<String?>) {
        self.channel = channel
        self.ending = ending
        self.reader = IteratorBox(inbox.makeAsyncIterator())
    }

    func send(
        _ method: String, _ target: String, host: String = "127.0.0.1", headers: [(String, String)] = [], body: String? = nil
    ) async throws {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: \(host)\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body { text += "Content-Length: \(body.utf8.count)\r\n" }
        text += "\r\n"
        if let body { text += body }
        try await self.channel.writeAndFlush(ByteBuffer(string: text)).get()
    }

    /// More bytes from the socket; `nil` at the end of the connection.
    private func more() async -> [UInt8]? {
        guard let buffer = await self.reader.iterator.next() else { return nil }
        return Array(buffer.readableBytesView)
    }

    /// Bytes up to and including `delimiter`; `nil` at the end of the connection.
    func read(until delimiter: [UInt8]) async -> [UInt8]? {
        while true {
            let found: [UInt8]? = self.pending.withLock { pending in
                guard pending.count >= delimiter.count else { return nil }
                for i in 0...(pending.count - delimiter.count) where pending[i..<(i + delimiter.count)].elementsEqual(delimiter) {
                    let out = Array(pending[..<(i + delimiter.count)])
                    pending.removeFirst(i + delimiter.count)
                    return out
                }
                return nil
            }
            if let found { return found }
            guard let bytes = await self.more() else { return nil }
            self.pending.withLock { $0.append(contentsOf: bytes) }
        }
    }

    func read(count: Int) async -> [UInt8]? {
        while true {
            let found: [UInt8]? = self.pending.withLock { pending in
                guard pending.count >= count else { return nil }
                let out = Array(pending[..<count])
                pending.removeFirst(count)
                return out
            }
            if let found { return found }
            guard let bytes = await self.more() else { return nil }
            self.pending.withLock { $0.append(contentsOf: bytes) }
        }
    }

    struct Head {
        var status: Int
        var headers: [(name: String, value: String)]
        func header(_ name: String) -> String? { self.headers.first { $0.name.lowercased() == name.lowercased() }?.value }
    }

    func readHead() async throws -> Head {
        guard let bytes = await self.read(until: Array("\r\n\r\n".utf8)) else {
            let how = self.ending.withLock { $0 } ?? "ended"
            throw TestFailure("connection closed before a response (\(how), \(self.opened.duration(to: .now)) after connecting)")
        }
        let lines = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let status = Int(lines[0].split(separator: " ")[1]) ?? 0
        let headers = lines.dropFirst().map { line -> (String, String) in
            let parts = line.split(separator: ":", maxSplits: 1)
            return (String(parts[0]), parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
        }
        return Head(status: status, headers: headers)
    }

    /// A whole response with a Content-Length or chunked body.
    func readResponse() async throws -> (head: Head, body: String) {
        let head = try await self.readHead()
        if let length = head.header("content-length").flatMap(Int.init) {
            guard let bytes = await self.read(count: length) else { throw TestFailure("connection closed in a body") }
            return (head, String(decoding: bytes, as: UTF8.self))
        }
        if head.status == 204 || head.status == 304 { return (head, "") }
        var body: [UInt8] = []
        while let chunk = try await self.readChunk() { body += chunk }
        return (head, String(decoding: body, as: UTF8.self))
    }

    /// One chunk of a chunked body; `nil` for the last (empty) one.
    func readChunk() async throws -> [UInt8]? {
        guard let sizeLine = await self.read(until: Array("\r\n".utf8)) else { throw TestFailure("connection closed in a chunked body") }
        let size = Int(String(decoding: sizeLine.dropLast(2), as: UTF8.self), radix: 16) ?? -1
        if size == 0 {
            _ = await self.read(until: Array("\r\n".utf8))
            return nil
        }
        guard size > 0, let data = await self.read(count: size + 2) else { throw TestFailure("bad chunk") }
        return Array(data.dropLast(2))
    }

    func close() async {
        try? await self.channel.close().get()
    }
}

/// A server-sent event stream read from a ``RawConnection``.
final class EventStreamClient: Sendable {
    struct Event: Equatable, CustomStringConvertible {
        var name: String
        var data: String
        var description: String { "\(self.name) \(self.data)" }
        /// The `path` and `data` members of a put/patch.
        func payload() throws -> (path: String, data: JSONValue) {
            guard case .object(let o) = try json(self.data), case .string(let path)? = o["path"], let data = o["data"] else {
                throw TestFailure("not a put/patch payload: \(self.data)")
            }
            return (path, data)
        }
    }

    let connection: RawConnection
    let head: RawConnection.Head
    /// What was read and not yet returned, and how much of it is known to hold no event's end
    /// (a large event is scanned once, not once per chunk).
    private let text = Mutex<(bytes: [UInt8], scanned: Int)>(([], 0))

    private init(connection: RawConnection, head: RawConnection.Head) {
        self.connection = connection
        self.head = head
    }

    static func open(port: Int, _ target: String, headers: [(String, String)] = [], autoRead: Bool = true, receiveBuffer: Int? = nil)
        async throws -> EventStreamClient
    {
        let connection = try await RawConnection.connect(port: port, autoRead: autoRead, receiveBuffer: receiveBuffer)
        try await connection.send("GET", target, headers: [("Accept", "text/event-stream")] + headers)
        let head = try await connection.readHead()
        return EventStreamClient(connection: connection, head: head)
    }

    /// The next event (keep-alives included); `nil` when the stream ended.
    func next() async throws -> Event? {
        while true {
            let block: [UInt8]? = self.text.withLock { text in
                guard text.bytes.count >= 2 else { return nil }
                for i in max(0, text.scanned - 1)..<(text.bytes.count - 1) where text.bytes[i] == 10 && text.bytes[i + 1] == 10 {
                    let out = Array(text.bytes[..<i])
                    text.bytes.removeFirst(i + 2)
                    text.scanned = 0
                    return out
                }
                text.scanned = text.bytes.count
                return nil
            }
            if let block {
                let lines = String(decoding: block, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                var name = ""
                var data = ""
                for line in lines {
                    if line.hasPrefix("event: ") {
                        name = String(line.dropFirst(7))
                    } else if line.hasPrefix("data: ") {
                        data = String(line.dropFirst(6))
                    } else {
                        throw TestFailure("unexpected line in an event: \(line.debugDescription)")
                    }
                }
                return Event(name: name, data: data)
            }
            guard let chunk = try await self.connection.readChunk() else { return nil }
            if chunk.contains(13) { throw TestFailure("CR in the event stream") }
            self.text.withLock { $0.bytes.append(contentsOf: chunk) }
        }
    }

    /// The next event other than a keep-alive.
    func nextData() async throws -> Event? {
        while let event = try await self.next() {
            if event.name != "keep-alive" { return event }
        }
        return nil
    }
}
