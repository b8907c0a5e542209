import Canopy
import CanopyServer
import Dispatch
import Foundation
import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

// B9 (server-sent event fan-out) and B10 (concurrent HTTP writes) against `canopy serve`'s
// server. The server runs in a child process (this executable with CANOPY_BENCH_SERVER set), so
// that its resident memory per stream is measured apart from the load generator's, and the load
// comes over real loopback sockets from NIO clients in this process.

/// The server scenarios (appended to `scenarios` in main.swift). When this process is the
/// benchmark's server child, serves instead and never returns.
var serverScenarios: [Scenario] {
    if let directory = ProcessInfo.processInfo.environment["CANOPY_BENCH_SERVER"] { serveForBenchmark(directory: directory) }
    return [
        Scenario(name: "B9.sse.c100.w100", stores: [.memory, .journal]) {
            try sseFanOut("B9.sse.c100.w100", clients: 100, writesPerSecond: 100, $0)
        },
        Scenario(name: "B9.sse.c100.w1k", stores: [.memory, .journal]) {
            try sseFanOut("B9.sse.c100.w1k", clients: 100, writesPerSecond: 1_000, $0)
        },
        Scenario(name: "B9.sse.c1k.w100", stores: [.memory, .journal]) {
            try sseFanOut("B9.sse.c1k.w100", clients: 1_000, writesPerSecond: 100, $0)
        },
        Scenario(name: "B9.sse.c1k.w1k", stores: [.memory, .journal]) {
            try sseFanOut("B9.sse.c1k.w1k", clients: 1_000, writesPerSecond: 1_000, $0)
        },
        Scenario(name: "B9.sse.query.c100.w100", stores: [.memory]) {
            try sseFanOut("B9.sse.query.c100.w100", clients: 100, writesPerSecond: 100, query: true, $0)
        },
        Scenario(name: "B9.sse.query.c100.w1k", stores: [.memory]) {
            try sseFanOut("B9.sse.query.c100.w1k", clients: 100, writesPerSecond: 1_000, query: true, $0)
        },
        Scenario(name: "B10.http.writes", stores: [.memory, .journal]) {
            try httpWrites("B10.http.writes", clients: 50, writes: 200_000, $0)
        },
    ]
}

// MARK: - The server child

/// Serves the namespaces in `directory` (in memory when it is `memory`) on a free loopback port,
/// prints `port N`, and exits when its standard input closes. With `CANOPY_BENCH_RULES=1` every
/// namespace has the blog's rules, user tokens are verified with ``BlogRules/secret``, and
/// ``BlogRules/adminToken`` is the admin's (a guarded server lets only its admin open a namespace;
/// B12).
func serveForBenchmark(directory: String) -> Never {
    var configuration = ServerConfiguration()
    configuration.port = 0
    configuration.keepAliveInterval = .seconds(30)
    if ProcessInfo.processInfo.environment["CANOPY_BENCH_RULES"] == "1" {
        configuration.rules = BlogRules.source
        configuration.jwtSecret = BlogRules.secret
        configuration.authToken = BlogRules.adminToken
    }
    let server = CanopyServer(configuration: configuration, store: NamespaceStore(directory: directory == "memory" ? nil : directory))
    Task {
        if let port = await server.listeningPort() { emit("port \(port)") }
    }
    Thread.detachNewThread {
        // The parent closes our stdin when done (or dies).
        var byte: UInt8 = 0
        while read(0, &byte, 1) > 0 {}
        Task { await server.shutdown() }
    }
    let done = DispatchSemaphore(value: 0)
    Task {
        do { try await server.run(handleSignals: true) } catch { log("bench server: \(error)") }
        done.signal()
    }
    done.wait()
    exit(0)
}

/// A server child process.
final class ServerChild: ServerProcess {
    let process = Process()
    let input = Pipe()
    let port: Int
    let directory: String

    /// A server over in-memory databases (`.memory`) or durable ones with the default sync policy,
    /// `always` (`.journal`); with `rules`, the blog's rules and HS256 user tokens (B12).
    init(_ store: Store, rules: Bool = false) throws {
        self.directory = NSTemporaryDirectory() + "canopy-bench-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let output = Pipe()
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var environment = ProcessInfo.processInfo.environment
        // A profiler to run the server under (`heaptrack`, `valgrind --tool=callgrind`): its
        // command, resolved on PATH; the figures of memory per connection are then the wrapper's.
        if let wrapper = environment["CANOPY_BENCH_SERVER_WRAPPER"]?.split(separator: " ").map(String.init), let tool = wrapper.first {
            self.process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            self.process.arguments = [tool] + wrapper.dropFirst() + [exe, "__server"]
        } else {
            self.process.executableURL = URL(fileURLWithPath: exe)
            self.process.arguments = ["__server"]
        }
        environment["CANOPY_BENCH_SERVER"] = store == .memory ? "memory" : self.directory
        environment["CANOPY_BENCH_RULES"] = rules ? "1" : nil
        self.process.environment = environment
        self.process.standardInput = self.input
        self.process.standardOutput = output
        try self.process.run()
        self.port = try Self.port(from: output.fileHandleForReading)
    }

    var pid: Int32 { self.process.processIdentifier }

    /// The port of the child's first line `port N` (a wrapper may print lines of its own before it).
    private static func port(from handle: FileHandle) throws -> Int {
        while true {
            var line: [UInt8] = []
            while true {
                let byte = handle.readData(ofLength: 1)
                guard let b = byte.first else { throw BenchError("the server child exited before listening") }
                if b == 10 { break }
                line.append(b)
            }
            let text = String(decoding: line, as: UTF8.self)
            if text.hasPrefix("port "), let port = Int(text.dropFirst(5)) { return port }
        }
    }

    func stop() {
        try? self.input.fileHandleForWriting.close()
        self.process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: self.directory)
    }
}

/// Runs `body` with a server child on `store` (with the blog's rules if `rules`) and a one-thread
/// event loop group for the clients; shuts the group down, then stops the server.
func withServerChild<T>(_ store: Store, rules: Bool = false, _ body: (ServerChild, MultiThreadedEventLoopGroup) throws -> T) throws -> T {
    let server = try ServerChild(store, rules: rules)
    defer { server.stop() }
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { try? group.syncShutdownGracefully() }
    return try body(server, group)
}

// MARK: - Blocking on async work

/// Runs `body` to completion from synchronous code.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let outcome: Result<T, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}

// MARK: - HTTP load connections

/// One keep-alive HTTP/1.1 connection that sends a request as soon as the previous response
/// arrived (driven from its event loop, no tasks per request).
final class HTTPLoadHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked Sendable: all state is touched on the channel's event loop only.
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Returns the bytes of request number `i` (from 0), or `nil` when this connection is done.
    let nextRequest: @Sendable (_ i: Int) -> ByteBuffer?
    let onDone: @Sendable (Result<Int, any Error>) -> Void
    private var pending: [UInt8] = []
    private var sent = 0
    private var completed = 0
    private var finished = false

    init(nextRequest: @escaping @Sendable (Int) -> ByteBuffer?, onDone: @escaping @Sendable (Result<Int, any Error>) -> Void) {
        self.nextRequest = nextRequest
        self.onDone = onDone
    }

    func start(_ context: ChannelHandlerContext) {
        self.sendNext(context)
    }

    func channelActive(context: ChannelHandlerContext) {
        self.start(context)
        context.fireChannelActive()
    }

    private func sendNext(_ context: ChannelHandlerContext) {
        guard let request = self.nextRequest(self.sent) else {
            self.finish(.success(self.completed))
            context.close(promise: nil)
            return
        }
        self.sent += 1
        context.writeAndFlush(self.wrapOutboundOut(request), promise: nil)
    }

    private func finish(_ result: Result<Int, any Error>) {
        guard !self.finished else { return }
        self.finished = true
        self.onDone(result)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = self.unwrapInboundIn(data)
        self.pending.append(contentsOf: buffer.readableBytesView)
        while let length = self.responseLength() {
            let status = Int(String(decoding: self.pending[9..<12], as: UTF8.self)) ?? 0
            self.pending.removeFirst(length)
            guard status / 100 == 2 else {
                self.finish(.failure(BenchError("HTTP status \(status)")))
                context.close(promise: nil)
                return
            }
            self.completed += 1
            self.sendNext(context)
        }
    }

    /// The length of the first complete response in `pending`, if there is one.
    private func responseLength() -> Int? {
        let p = self.pending
        guard p.count >= 16 else { return nil }
        var i = 0
        var contentLength = 0
        var lineStart = 0
        while i + 1 < p.count {
            if p[i] == 13 && p[i + 1] == 10 {
                if i == lineStart { return p.count >= i + 2 + contentLength ? i + 2 + contentLength : nil }
                let line = p[lineStart..<i]
                if line.count > 15, line.prefix(15).map({ $0 | 0x20 }) == Array("content-length:".utf8) {
                    contentLength = Int(String(decoding: line.dropFirst(15), as: UTF8.self).trimmingCharacters(in: .whitespaces)) ?? 0
                }
                lineStart = i + 2
                i += 2
                continue
            }
            i += 1
        }
        return nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.finish(.failure(BenchError("connection closed after \(self.completed) responses")))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.finish(.failure(error))
        context.close(promise: nil)
    }
}

func httpRequest(_ method: String, _ target: String, body: String) -> ByteBuffer {
    ByteBuffer(
        string:
            "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    )
}

// MARK: - B10

/// A counter shared by connections.
final class SharedCounter: Sendable {
    private let value = Atomic<Int>(0)
    /// The value before this increment.
    func next() -> Int { self.value.wrappingAdd(1, ordering: .relaxed).oldValue }
}

/// B10: `clients` concurrent keep-alive connections share `writes` small PUTs (`print=silent`).
func httpWrites(_ name: String, clients: Int, writes: Int, _ store: Store) throws -> BenchResult {
    let total = Bench.scaled(writes)
    return try withServerChild(store) { server, group in
        let port = server.port
        let perClient = (total + clients - 1) / clients
        let issued = SharedCounter()
        let start = monotonicNanos()
        let outcomes = try httpLoads(clients: clients, port: port, group: group) { client, i in
            guard i < perClient, issued.next() < total else { return nil }
            return httpRequest("PUT", "/b10/c\(client)/k\(i % 100).json?print=silent", body: "{\"v\":\(i),\"c\":\(client)}")
        }
        let seconds = secondsSince(start)
        var done = 0
        var failures: [String] = []
        for outcome in outcomes {
            switch outcome {
            case .success(let n): done += n
            case .failure(let error): failures.append("\(error)")
            }
        }
        // Check: every client's last value per key is on the server.
        let check: String
        if !failures.isEmpty {
            check = "FAIL \(failures.count) connections failed: \(failures[0])"
        } else if done != total {
            check = "FAIL \(done) of \(total) writes answered"
        } else {
            let text = try blocking { try await fetch(port: port, "/b10.json?shallow=true") }
            let clientsSeen = text.components(separatedBy: "\"c").count - 1
            check = clientsSeen == min(clients, total) ? "ok" : "FAIL \(clientsSeen) client locations on the server"
        }
        return BenchResult(scenario: name, store: store, n: done, seconds: seconds, extra: [("clients", .int(clients))], check: check)
    }
}

/// GET `target` on a new connection; the body as text.
func fetch(port: Int, _ target: String, method: String = "GET", body: String = "") async throws -> String {
    let request = "\(method) \(target) HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    let text = String(decoding: try await exchange(port: port, request), as: UTF8.self)
    guard let split = text.range(of: "\r\n\r\n") else { throw BenchError("no response") }
    return String(text[split.upperBound...])
}

/// Sends `request` on a new connection to `host:port` and collects what comes back, until
/// `enough` says the bytes so far suffice, the server closes the connection or `timeout` passed;
/// then closes it.
func exchange(
    host: String = "127.0.0.1", port: Int, _ request: String, timeout: TimeAmount? = nil, until enough: ([UInt8]) -> Bool = { _ in false }
) async throws -> [UInt8] {
    let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
    final class Collect: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let continuation: AsyncStream<[UInt8]>.Continuation
        init(_ continuation: AsyncStream<[UInt8]>.Continuation) { self.continuation = continuation }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            self.continuation.yield(Array(self.unwrapInboundIn(data).readableBytesView))
        }
        func channelInactive(context: ChannelHandlerContext) { self.continuation.finish() }
    }
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Collect(continuation)) }
        }
        .connectTimeout(.seconds(10))
        .connect(host: host, port: port).get()
    defer { channel.close(promise: nil) }
    if let timeout { channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) } }
    try await channel.writeAndFlush(ByteBuffer(string: request)).get()
    var received: [UInt8] = []
    for await bytes in stream {
        received += bytes
        if enough(received) { break }
    }
    return received
}

// MARK: - B9

/// Counts the events a streaming client receives and, for sampled clients, the latency of each
/// (the writer puts its monotonic send time in the value).
final class SSECounter: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked Sendable: mutable state is touched on the channel's event loop, and read by the
    // driver only after a barrier (the final counts are read once all clients are done).
    typealias InboundIn = ByteBuffer
    private static let marker: [UInt8] = Array(#""t":"#.utf8)
    let sampled: Bool
    let target: String
    /// The highest index seen (a query stream's patch can carry several, in key order).
    let lastIndex = Atomic<Int>(-1)
    let events = Atomic<Int>(0)
    let closed = Atomic<Bool>(false)
    var latencies: [UInt64] = []
    private var carry: [UInt8] = []
    private let headerDone = Atomic<Bool>(false)

    init(sampled: Bool, target: String = "/fan.json") {
        self.sampled = sampled
        self.target = target
        if sampled { self.latencies.reserveCapacity(1 << 16) }
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(
            NIOAny(ByteBuffer(string: "GET \(self.target) HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let now = monotonicNanos()
        let buffer = self.unwrapInboundIn(data)
        // Scan for `"t":<digits>` and `"i":<digits>` (the data is {"i":N,"t":T}); a chunk may end mid-token.
        var bytes = self.carry
        bytes.append(contentsOf: buffer.readableBytesView)
        var i = 0
        var lastComplete = 0
        let n = bytes.count
        var count = 0
        while i + 4 <= n {
            if bytes[i] == 0x22 && bytes[i + 1] == UInt8(ascii: "t") && bytes[i + 2] == 0x22 && bytes[i + 3] == UInt8(ascii: ":") {
                var j = i + 4
                var t: UInt64 = 0
                while j < n, bytes[j] >= 48, bytes[j] <= 57 {
                    t = t &* 10 &+ UInt64(bytes[j] - 48)
                    j += 1
                }
                if j == n { break }  // incomplete
                count += 1
                if self.sampled && t > 0 && now > t { self.latencies.append(now - t) }
                // The index sits before "t" in key order: {"i":N,"t":T}; find it backwards.
                if i >= 2 {
                    var k = i - 2  // the last digit of the index, before the comma
                    while k > 0, bytes[k] >= 48, bytes[k] <= 57 { k -= 1 }
                    if k + 1 < i - 1, let index = Int(String(decoding: bytes[(k + 1)..<(i - 1)], as: UTF8.self)),
                        index > self.lastIndex.load(ordering: .relaxed)
                    {
                        self.lastIndex.store(index, ordering: .relaxed)
                    }
                }
                i = j
                lastComplete = j
                continue
            }
            i += 1
        }
        // Keep an unfinished tail (bounded) for the next read.
        let keepFrom = max(lastComplete, n - 64)
        self.carry = Array(bytes[keepFrom...])
        if count > 0 { self.events.wrappingAdd(count, ordering: .relaxed) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.closed.store(true, ordering: .relaxed)
    }
}

/// B9: `clients` streams on one path; a writer puts `{"i": n, "t": now}` at `writesPerSecond`.
///
/// With `query`, the location holds `queryChildren` children `{"i": 0, "t": 0, "v": rank}` and
/// every stream is the query `orderBy="v"&limitToLast=10`; write n puts
/// `{"i": n, "t": now, "v": 1000000 + n}` at a random child, which moves it to the top of every
/// window (a patch with it, and the child that leaves as `null`).
func sseFanOut(_ name: String, clients: Int, writesPerSecond: Int, query: Bool = false, _ store: Store) throws -> BenchResult {
    try withServerChild(store) { server, group in
        try sseFanOut(name, clients: clients, writesPerSecond: writesPerSecond, query: query, store, server: server, group: group)
    }
}

/// B9's fan-out against `server`, its clients on `group` (which it shuts down); also reports the
/// server's CPU time per delivered event.
func sseFanOut(
    _ name: String, clients requested: Int, writesPerSecond: Int, query: Bool = false, _ store: Store, server: some ServerProcess,
    group: MultiThreadedEventLoopGroup
) throws -> BenchResult {
    let queryChildren = 5_000
    let clients = Bench.scaled(requested)
    let duration = max(1.0, 10 * Bench.scale)
    do {
        let port = server.port
        // The value every stream starts with: {"i": 0, "t": 0}; the writes are i = 1…n.
        let initialBody: String
        if query {
            initialBody =
                "{"
                + (0..<queryChildren).map { "\"\(paddedKey(UInt8(ascii: "p"), $0, digits: 5))\":{\"i\":0,\"t\":0,\"v\":\($0)}" }.joined(
                    separator: ",") + "}"
        } else {
            initialBody = #"{"i":0,"t":0}"#
        }
        _ = try blocking { try await fetch(port: port, "/fan.json?print=silent", method: "PUT", body: initialBody) }
        let baseline = server.rssBytes
        // Sample the latency of every 10th client (and at least one).
        let target = query ? "/fan.json?orderBy=%22v%22&limitToLast=10" : "/fan.json"
        let counters = (0..<clients).map { SSECounter(sampled: $0 % 10 == 0, target: target) }
        // Wait until every stream is registered (each got its initial put).
        try connectAll(counters, group: group, port: { _ in port }, within: 60, what: "streams") { $0.events.load(ordering: .relaxed) >= 1 }
        usleep(200_000)
        let idleRSS = server.rssBytes
        let perStream = Double(idleRSS - baseline) / Double(clients)
        let initialEvents = counters.reduce(0) { $0 + $1.events.load(ordering: .relaxed) }

        // The writer: one keep-alive connection, paced to `writesPerSecond`.
        let totalWrites = Int(Double(writesPerSecond) * duration)
        let interval = 1_000_000_000 / UInt64(writesPerSecond)
        // Its own loop, which the pacing sleeps block.
        let writerGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? writerGroup.syncShutdownGracefully() }
        var rng = BenchRNG(seed: 9)
        let queryTargets =
            query ? (0..<totalWrites).map { _ in paddedKey(UInt8(ascii: "p"), rng.next(below: queryChildren), digits: 5) } : []
        let startCPU = server.cpuSeconds
        let start = monotonicNanos()
        let written = try pacedWrites(port: port, group: writerGroup, count: totalWrites, start: start, interval: interval) { i in
            if query {
                return httpRequest(
                    "PUT", "/fan/\(queryTargets[i]).json?print=silent",
                    body: "{\"i\":\(i + 1),\"t\":\(monotonicNanos()),\"v\":\(1_000_000 + i + 1)}")
            }
            return httpRequest("PUT", "/fan.json?print=silent", body: "{\"i\":\(i + 1),\"t\":\(monotonicNanos())}")
        }
        let writeSeconds = secondsSince(start)
        // Wait for delivery to finish (every open client saw the last write), bounded.
        waitForDelivery(to: counters, of: totalWrites)
        let seconds = secondsSince(start)
        let delivered = counters.reduce(0) { $0 + $1.events.load(ordering: .relaxed) } - initialEvents
        let cpuPerEvent = (server.cpuSeconds - startCPU) / Double(max(1, delivered)) * 1e6
        // A query stream coalesces the changes of writes that arrive while it is busy into one patch,
        // so only its last index is checked.
        let complete = counters.filter {
            $0.lastIndex.load(ordering: .relaxed) == totalWrites && (query || $0.events.load(ordering: .relaxed) == totalWrites + 1)
        }.count
        return try fanOutResult(
            name, store, delivered: delivered, seconds: seconds, written: written, writes: totalWrites, complete: complete,
            clients: counters, stopping: group, missed: "clients got every event",
            extra: [
                ("clients", .int(clients)), ("children", .int(query ? queryChildren : 1)), ("writes", .int(totalWrites)),
                ("writes_per_s", .int(Int(Double(totalWrites) / writeSeconds))),
                ("idle_rss_per_stream_b", .double(perStream, 0)), ("server_cpu_us_per_event", .double(cpuPerEvent, 2)),
            ])
    }
}

/// The fan-out scenarios' writer: one keep-alive connection on `group` (a loop of its own, which
/// the pacing sleeps block) sends `request(i)` for i = 0..<count, request i due at `start + i ·
/// interval`; returns the number of answered requests.
func pacedWrites(
    port: Int, group: any EventLoopGroup, count: Int, start: UInt64, interval: UInt64, request: @escaping @Sendable (Int) -> ByteBuffer
) throws -> Int {
    try blocking { () async throws -> Int in
        try await httpLoad(port: port, group: group) { i in
            guard i < count else { return nil }
            let due = start + UInt64(i) * interval
            let now = monotonicNanos()
            if due > now { usleep(UInt32((due - now) / 1000)) }
            return request(i)
        }.get()
    }
}

/// Runs `clients` keep-alive connections on `group` (``httpLoad(port:group:nextRequest:)``),
/// connection `c` sending `request(c, i)` for i = 0, 1, … until it returns `nil`; the outcome of
/// each connection.
func httpLoads(clients: Int, port: Int, group: any EventLoopGroup, request: @escaping @Sendable (_ client: Int, _ i: Int) -> ByteBuffer?)
    throws -> [Result<Int, any Error>]
{
    try blocking {
        try await withThrowingTaskGroup(of: Result<Int, any Error>.self) { tasks in
            for client in 0..<clients {
                tasks.addTask { try await httpLoad(port: port, group: group) { i in request(client, i) } }
            }
            var all: [Result<Int, any Error>] = []
            for try await outcome in tasks { all.append(outcome) }
            return all
        }
    }
}

/// Runs one keep-alive connection on `group` that sends `nextRequest(i)` for i = 0, 1, … until it
/// returns `nil`, each after the previous answer; the outcome is the number of answered requests.
func httpLoad(port: Int, group: any EventLoopGroup, nextRequest: @escaping @Sendable (Int) -> ByteBuffer?) async throws -> Result<
    Int, any Error
> {
    let (stream, continuation) = AsyncStream<Result<Int, any Error>>.makeStream()
    let handler = HTTPLoadHandler(
        nextRequest: nextRequest,
        onDone: { result in
            continuation.yield(result)
            continuation.finish()
        })
    _ = try await ClientBootstrap(group: group)
        .channelOption(.socketOption(.tcp_nodelay), value: 1)
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(handler) }
        }
        .connect(host: "127.0.0.1", port: port).get()
    for await result in stream { return result }
    return .failure(BenchError("the connection ended without an outcome"))
}
