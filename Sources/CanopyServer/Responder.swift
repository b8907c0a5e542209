import Canopy
import CanopyCore
import HTTPTypes
public import Hummingbird
import Logging
import NIOCore
import Synchronization

/// The request context: Hummingbird's, plus the connection (to drop a stream's client).
public struct CanopyRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    let channel: (any Channel)?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }
}

extension HTTPField.Name {
    static let firebaseETag = HTTPField.Name("X-Firebase-ETag")!
    static let methodOverride = HTTPField.Name("X-HTTP-Method-Override")!
}

/// The state shared by every request of one server.
final class ServerState: Sendable {
    let configuration: ServerConfiguration
    let store: NamespaceStore
    let pushIDs = PushIDGenerator()
    private let streams = Mutex<[UInt64: EventStream]>([:])
    private let acceptingStreams = Atomic<Bool>(true)
    /// `nil` when coalescing is off.
    let wakes: WakeScheduler?

    init(configuration: ServerConfiguration, store: NamespaceStore) {
        self.configuration = configuration
        self.store = store
        self.wakes = configuration.streamCoalescing > .zero ? WakeScheduler(interval: configuration.streamCoalescing) : nil
    }

    func register(_ stream: EventStream) -> Bool {
        self.streams.withLock { streams in
            guard self.acceptingStreams.load(ordering: .acquiring) else { return false }
            streams[stream.id] = stream
            return true
        }
    }

    func unregister(_ stream: EventStream) {
        _ = self.streams.withLock { $0.removeValue(forKey: stream.id) }
    }

    var streamCount: Int { self.streams.withLock { $0.count } }

    func sendKeepAlive() {
        let all = self.streams.withLock { Array($0.values) }
        for stream in all { stream.send(EventRender.keepAlive) }
    }

    /// Ends every stream (their clients see the end of the response) and refuses new ones.
    func closeStreams() {
        let all = self.streams.withLock { streams in
            self.acceptingStreams.store(false, ordering: .releasing)
            return Array(streams.values)
        }
        for stream in all { stream.finish() }
    }
}

/// Serves the Firebase Realtime Database REST protocol and its event streams.
struct CanopyResponder: HTTPResponder {
    typealias Context = CanopyRequestContext
    let state: ServerState

    func respond(to request: Request, context: Context) async throws -> Response {
        let start = ContinuousClock.now
        var request = request
        let response: Response
        do {
            response = try await self.handle(&request, context: context)
        } catch {
            response = error.response
        }
        let logger = self.state.configuration.logger
        if logger.logLevel <= .info {
            let elapsed = ContinuousClock.now - start
            logger.info(
                "request",
                metadata: [
                    "method": "\(request.method)", "uri": "\(Self.redacted(request.uri.description))",
                    "status": "\(response.status.code)", "ms": "\(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)",
                ]
            )
        }
        return response
    }

    /// The URI without the value of `auth=` / `access_token=`.
    static func redacted(_ uri: String) -> String {
        guard uri.contains("auth=") || uri.contains("access_token=") else { return uri }
        var parts = uri.split(separator: "?", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return uri }
        parts[1] = parts[1].split(separator: "&", omittingEmptySubsequences: false).map { pair in
            pair.hasPrefix("auth=") ? "auth=REDACTED" : pair.hasPrefix("access_token=") ? "access_token=REDACTED" : String(pair)
        }.joined(separator: "&")
        return parts.joined(separator: "?")
    }

    private func handle(_ request: inout Request, context: Context) async throws(RESTError) -> Response {
        let target = try RESTTarget(uri: request.uri.description)
        try self.authorize(request, target)
        var method = request.method
        if method == .post {
            if let override = request.headers[.methodOverride] ?? target.parameters["x-http-method-override"] {
                guard let m = HTTPRequest.Method(override.uppercased()), [.put, .patch, .delete, .post, .get].contains(m) else {
                    throw .badRequest("Unsupported X-HTTP-Method-Override \"\(override)\".")
                }
                method = m
            }
        }
        let namespaceName = target.parameters["ns"].flatMap { $0.isEmpty ? nil : $0 } ?? self.state.configuration.defaultNamespace
        let namespace: Namespace
        do {
            namespace = try await self.state.store.namespace(namespaceName)
        } catch let error as RESTError {
            throw error
        } catch {
            throw RESTError(.serviceUnavailable, "\(error)")
        }
        let silent: Bool
        let pretty: Bool
        switch target.parameters["print"] {
        case nil, "": silent = false; pretty = false
        case "silent": silent = true; pretty = false
        case "pretty": silent = false; pretty = true
        case let other?: throw .badRequest("print must be \"pretty\" or \"silent\", not \"\(other)\".")
        }
        let output = Output(silent: silent, pretty: pretty, wantsETag: request.headers[.firebaseETag]?.lowercased() == "true")

        switch target.kind {
        case .rules:
            return try await self.rules(&request, method: method, namespace: namespace, output: output)
        case .priority(let path):
            return try await self.priority(&request, method: method, path: path, namespace: namespace, output: output)
        case .data(let path):
            if method != .get {
                if let name = ReadOptions.filterNames.first(where: { target.parameters[$0] != nil }) ?? ["shallow", "format"].first(where: { target.parameters[$0] != nil }) {
                    throw .badRequest("\(name) is only supported when reading (GET); this is a \(method).")
                }
                if path.isInfo { throw .badRequest("Can't modify data under /.info/.") }
            }
            if (method == .patch || method == .post) && request.headers[.ifMatch] != nil {
                throw .badRequest("if-match is not supported for \(method); use it with PUT or DELETE.")
            }
            switch method {
            case .get:
                let options = try ReadOptions(target.parameters)
                if let accept = request.headers[.accept], accept.contains("text/event-stream") {
                    return try await self.stream(path: path, options: options, namespace: namespace, context: context)
                }
                return try await self.read(request, path: path, options: options, namespace: namespace, output: output)
            case .put:
                let body = try await self.body(&request)
                let value = try WriteBodies.value(body, location: path.keys, function: "set")
                return try await self.set(request, path: path, value: value, namespace: namespace, output: output)
            case .delete:
                return try await self.set(request, path: path, value: WriteValue(node: .empty), namespace: namespace, output: output)
            case .post:
                let body = try await self.body(&request)
                // Validate as if written at the (20-character) push id below the location.
                let value = try WriteBodies.value(body, location: path.keys + [ChildKey("--------------------")], function: "push")
                return try await self.push(path: path, value: value, namespace: namespace, output: output)
            case .patch:
                let body = try await self.body(&request)
                guard let entries = try WriteBodies.update(body, location: path.keys) else {
                    return try await self.set(request, path: path, value: WriteValue(node: .empty), namespace: namespace, output: output)
                }
                return try await self.update(path: path, entries: entries, namespace: namespace, output: output)
            default:
                throw RESTError(.methodNotAllowed, "Method \(method) is not supported; use GET, PUT, POST, PATCH or DELETE.")
            }
        }
    }

    struct Output {
        var silent: Bool
        var pretty: Bool
        var wantsETag: Bool
    }

    // MARK: - Access

    private func authorize(_ request: Request, _ target: RESTTarget) throws(RESTError) {
        guard let token = self.state.configuration.authToken else { return }
        var presented: String?
        if let header = request.headers[.authorization] {
            let parts = header.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { presented = String(parts[1]) }
        }
        presented = presented ?? target.parameters["auth"] ?? target.parameters["access_token"]
        guard let presented, Self.constantTimeEqual(presented, token) else {
            throw RESTError(.unauthorized, "Unauthorized request.")
        }
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var diff = UInt8(x.count == y.count ? 0 : 1)
        for i in 0..<max(x.count, y.count) {
            diff |= (i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0)
        }
        return diff == 0
    }

    // MARK: - Bodies

    private func body(_ request: inout Request) async throws(RESTError) -> [UInt8] {
        let limit = self.state.configuration.maxBodyBytes
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw RESTError(.contentTooLarge, "Payload too large: the limit is \(limit) bytes.")
        }
        do {
            let buffer = try await request.collectBody(upTo: limit)
            return Array(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            throw RESTError(.contentTooLarge, "Payload too large: the limit is \(limit) bytes.")
        } catch {
            throw .badRequest("Could not read the request body: \(error)")
        }
    }

    // MARK: - Reads

    private func read(_ request: Request, path: DatabasePath, options: ReadOptions, namespace: Namespace, output: Output) async throws(RESTError) -> Response {
        if request.headers[.ifMatch] != nil {
            throw .badRequest("if-match is not supported for GET; use if-none-match.")
        }
        let node = try await namespace.database.loop { access in access.node(at: path) }
        let result = options.apply(node)
        var headers: HTTPFields = [:]
        let ifNoneMatch = request.headers[.ifNoneMatch]
        if output.wantsETag || ifNoneMatch != nil {
            let etag = ETag.of(result)
            if let ifNoneMatch, ifNoneMatch == etag {
                return Response(status: .notModified, headers: [.eTag: etag])
            }
            headers[.eTag] = etag
        }
        if output.silent { return Response(status: .noContent, headers: headers) }
        return JSONBody.response(NodeWriter.bytes(result, export: options.export, pretty: output.pretty), headers: headers)
    }

    // MARK: - Writes

    /// PUT and DELETE (and a `null` PATCH), with `if-match` compare-and-set.
    private func set(_ request: Request, path: DatabasePath, value: WriteValue, namespace: Namespace, output: Output) async throws(RESTError) -> Response {
        let ifMatch = request.headers[.ifMatch]
        let write = WriteOperation.set(path, value)
        let written: Node = try await namespace.database.apply { access in
            if let ifMatch {
                let current = access.node(at: path)
                let etag = ETag.of(current)
                if etag != ifMatch {
                    var error = RESTError(.preconditionFailed, "")
                    error.headers[.eTag] = etag
                    error.headers[.contentType] = JSONBody.contentType
                    return .refuse(error, body: NodeWriter.bytes(current, export: false, pretty: false))
                }
            }
            return .write(write) { access in access.node(at: path) }
        }
        var headers: HTTPFields = [:]
        if output.wantsETag { headers[.eTag] = ETag.of(written) }
        if output.silent { return Response(status: .noContent, headers: headers) }
        return JSONBody.response(NodeWriter.bytes(written, export: false, pretty: output.pretty), headers: headers)
    }

    private func push(path: DatabasePath, value: WriteValue, namespace: Namespace, output: Output) async throws(RESTError) -> Response {
        let pushIDs = self.state.pushIDs
        let (name, written): (String, Node) = try await namespace.database.apply { access in
            let name = pushIDs.next(now: access.now())
            let location = path.appending(ChildKey(name))
            return .write(.set(location, value)) { access in (name, access.node(at: location)) }
        }
        var headers: HTTPFields = [:]
        if output.wantsETag { headers[.eTag] = ETag.of(written) }
        if output.silent { return Response(status: .noContent, headers: headers) }
        var out: [UInt8] = Array(#"{"name":"#.utf8)
        JSONWriter.appendString(name, to: &out)
        out.append(UInt8(ascii: "}"))
        return JSONBody.response(out, headers: headers)
    }

    private func update(path: DatabasePath, entries: [WriteOperation.Entry], namespace: Namespace, output: Output) async throws(RESTError) -> Response {
        let write = WriteOperation(path: path, entries: entries)
        let members: [(key: String, node: Node)] = try await namespace.database.apply { access in
            .write(write) { access in
                let root = access.node(at: path)
                return entries.filter { !$0.isPriority }.map { entry in
                    (entry.path.map(\.string).joined(separator: "/"), root.node(at: entry.path))
                }
            }
        }
        if output.silent { return Response(status: .noContent) }
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (i, member) in members.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            if output.pretty { JSONWriter.appendNewline(level: 1, to: &out) }
            JSONWriter.appendString(member.key, to: &out)
            out.append(contentsOf: output.pretty ? Array(": ".utf8) : [UInt8(ascii: ":")])
            let bytes = NodeWriter.bytes(member.node, export: false, pretty: output.pretty)
            out.append(contentsOf: member.node.isEmpty ? Array("null".utf8) : bytes)
        }
        if output.pretty && !members.isEmpty { JSONWriter.appendNewline(level: 0, to: &out) }
        out.append(UInt8(ascii: "}"))
        return JSONBody.response(out)
    }

    // MARK: - Priorities and rules

    private func priority(_ request: inout Request, method: HTTPRequest.Method, path: DatabasePath, namespace: Namespace, output: Output) async throws(RESTError) -> Response {
        switch method {
        case .get:
            let node = try await namespace.database.loop { access in access.node(at: path) }
            let priority: Node = node.priority.map { .leaf($0) } ?? .empty
            if output.silent { return Response(status: .noContent) }
            return JSONBody.response(NodeWriter.bytes(priority, export: false, pretty: output.pretty))
        case .put, .delete:
            let argument: ValueConverter.PriorityArgument = method == .put ? try WriteBodies.priority(try await self.body(&request)) : .none
            let written: Node = try await namespace.database.apply { access in
                .write(.setPriority(path, argument)) { access in access.node(at: path).priority.map { .leaf($0) } ?? .empty }
            }
            if output.silent { return Response(status: .noContent) }
            return JSONBody.response(NodeWriter.bytes(written, export: false, pretty: output.pretty))
        default:
            throw RESTError(.methodNotAllowed, "Method \(method) is not supported for .priority; use GET, PUT or DELETE.")
        }
    }

    private func rules(_ request: inout Request, method: HTTPRequest.Method, namespace: Namespace, output: Output) async throws(RESTError) -> Response {
        switch method {
        case .get:
            let rules = namespace.rules.withLock { $0 }
            return JSONBody.response(JSONWriter.bytes(rules, options: output.pretty ? [.pretty, .sortedKeys] : [.sortedKeys]))
        case .put:
            let rules = try Rules.parse(try await self.body(&request))
            if let file = namespace.rulesFile {
                let bytes = JSONWriter.bytes(rules, options: [.pretty, .sortedKeys])
                guard FileSystem.writeAtomically(bytes, to: file) else {
                    throw RESTError(.serviceUnavailable, "Could not save the rules.")
                }
            }
            namespace.rules.withLock { $0 = rules }
            if output.silent { return Response(status: .noContent) }
            return JSONBody.response(Array(#"{"status":"ok"}"#.utf8))
        default:
            throw RESTError(.methodNotAllowed, "Method \(method) is not supported for rules; use GET or PUT.")
        }
    }

    // MARK: - Streams

    private func stream(path: DatabasePath, options: ReadOptions, namespace: Namespace, context: Context) async throws(RESTError) -> Response {
        if options.shallow || options.export {
            throw .badRequest("shallow and format=export are not supported on streams.")
        }
        let channel = context.channel
        let stream = EventStream(location: path, query: options.hasFilters ? options.query : nil, limit: self.state.configuration.streamBufferBytes, scheduler: self.state.wakes) {
            channel?.close(promise: nil)
        }
        guard self.state.register(stream) else { throw RESTError(.serviceUnavailable, "The server is shutting down.") }
        let state = self.state
        let database = namespace.database
        let hub = namespace.hub
        let cleanup: @Sendable () -> Void = {
            state.unregister(stream)
            database.onLoop { _ in hub.remove(stream) }
        }
        let initial: Node?
        do {
            initial = try await database.loop { access in hub.add(stream, access: access) }
        } catch {
            cleanup()
            throw error
        }
        guard let initial else {
            cleanup()
            throw RESTError(.serviceUnavailable, "The database was closed.")
        }
        channel?.closeFuture.whenComplete { _ in
            stream.drop()
            cleanup()
        }
        if let channel { StreamHangup.install(on: channel) }
        let headers: HTTPFields = [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-cache"]
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            defer { cleanup() }
            var last = initial
            while let batch = await stream.next() {
                if let bytes = batch.bytes { try await writer.write(bytes) }
                if let snapshot = batch.snapshot, let query = stream.query {
                    let window = QueryWindow.apply(snapshot, query)
                    if let event = EventRender.diff(from: last, to: window) { try await writer.write(ByteBuffer(bytes: event)) }
                    last = window
                }
                if let trailer = batch.trailer { try await writer.write(trailer) }
            }
            try await writer.finish(nil)
        })
    }
}

// MARK: - Hopping onto the database loop

/// What a write job decides, on the loop: refuse (with a body), or apply a write and then read
/// the result.
enum WriteDecision<T: Sendable> {
    case refuse(RESTError, body: [UInt8])
    case write(WriteOperation, then: (LoopAccess) -> T)
}

extension Database {
    /// Runs `body` on the loop and returns its result.
    func loop<T: Sendable>(_ body: @escaping @Sendable (LoopAccess) -> T) async throws(RESTError) -> T {
        let result: T? = await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            let accepted = self.onLoop { access in continuation.resume(returning: body(access)) }
            if !accepted { continuation.resume(returning: nil) }
        }
        guard let result else { throw RESTError(.serviceUnavailable, "The database is closed.") }
        return result
    }

    /// Decides on the loop (reads and the write are one atomic step), applies the write, and
    /// returns once it is durable.
    func apply<T: Sendable>(_ decide: @escaping @Sendable (LoopAccess) -> WriteDecision<T>) async throws(RESTError) -> T {
        let result: Result<T, RESTError> = await withCheckedContinuation { continuation in
            let accepted = self.onLoop { access in
                switch decide(access) {
                case .refuse(let error, let body):
                    var error = error
                    error.body = body
                    continuation.resume(returning: .failure(error))
                case .write(let write, let then):
                    let rendezvous = WriteRendezvous<T>(continuation)
                    access.apply(write) { error in rendezvous.complete(error) }
                    rendezvous.setValue(then(access))
                }
            }
            if !accepted { continuation.resume(returning: .failure(RESTError(.serviceUnavailable, "The database is closed."))) }
        }
        return try result.get()
    }
}

/// Joins a write's result (read right after it is applied) and its durability completion
/// (which may come first, when the write is refused, or later).
final class WriteRendezvous<T: Sendable>: Sendable {
    private struct State {
        var value: T?
        var error: DatabaseError?
        var completed = false
        var continuation: CheckedContinuation<Result<T, RESTError>, Never>?
    }

    private let state: Mutex<State>

    init(_ continuation: CheckedContinuation<Result<T, RESTError>, Never>) {
        self.state = Mutex(State(continuation: continuation))
    }

    func setValue(_ value: T) {
        self.resolve { $0.value = value }
    }

    func complete(_ error: DatabaseError?) {
        self.resolve { state in
            state.completed = true
            state.error = error
        }
    }

    private func resolve(_ update: (inout State) -> Void) {
        let action: (CheckedContinuation<Result<T, RESTError>, Never>, Result<T, RESTError>)? = self.state.withLock { state in
            update(&state)
            guard let continuation = state.continuation, state.completed else { return nil }
            if let error = state.error {
                state.continuation = nil
                return (continuation, .failure(WriteBodies.error(error)))
            }
            guard let value = state.value else { return nil }
            state.continuation = nil
            return (continuation, .success(value))
        }
        if let (continuation, result) = action { continuation.resume(returning: result) }
    }
}
