import CanopyCore
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// A minimal HTTP/1.1 client on SwiftNIO for talking to `canopy serve`: one connection per
/// request (`Connection: close`).
enum HTTPClient {
    struct Response: Sendable {
        var status: Int
        var body: [UInt8]
        /// The `Location` header, if any.
        var location: String?
    }

    typealias Channel = NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>

    static func connect(_ server: ServerURL) async throws(CLIError) -> Channel {
        do {
            return try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.seconds(10))
                .connect(host: server.host, port: server.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        return try Channel(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw .unavailable("Cannot reach the server at \(server.text): \(Self.describe(error)).")
        }
    }

    static func head(
        _ server: ServerURL, _ method: HTTPMethod, _ target: String, bodyLength: Int?, accept: String, extra: [(String, String)] = []
    ) -> HTTPRequestHead {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "\(server.host):\(server.port)")
        headers.add(name: "Accept", value: accept)
        headers.add(name: "Connection", value: "close")
        headers.add(name: "User-Agent", value: "canopy-cli")
        if let bodyLength {
            headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
            headers.add(name: "Content-Length", value: "\(bodyLength)")
        }
        for (name, value) in extra { headers.add(name: name, value: value) }
        return HTTPRequestHead(version: .http1_1, method: method, uri: target, headers: headers)
    }

    /// Sends one request and returns the response; an error status becomes a `CLIError` with the
    /// server's message (400: usage, others: failure). `headers` are added to the request's. A
    /// redirect (307, 308) is followed (``Redirect``): the same method, body and headers go to
    /// its `Location`.
    static func send(
        _ server: ServerURL, _ method: HTTPMethod, _ target: String, body: [UInt8]? = nil, headers: [(String, String)] = []
    ) async throws(CLIError) -> Response {
        var request = Redirect.Request(server: server, target: target, headers: headers)
        for _ in 0...Redirect.limit {
            let response = try await self.exchange(request, method, body: body)
            if let location = try Redirect.location(of: response.status, response.location, from: request.server) {
                request = try request.following(location)
                continue
            }
            guard (200..<300).contains(response.status) else { throw Self.error(response) }
            return response
        }
        throw Redirect.tooMany(from: server)
    }

    /// One request and its response, redirect or not.
    private static func exchange(_ request: Redirect.Request, _ method: HTTPMethod, body: [UInt8]?) async throws(CLIError) -> Response {
        let server = request.server
        let channel = try await self.connect(server)
        let response: Response
        do {
            response = try await channel.executeThenClose { inbound, outbound in
                var parts: [HTTPClientRequestPart] = [
                    .head(
                        Self.head(
                            server, method, request.target, bodyLength: body?.count ?? (method == .GET || method == .DELETE ? nil : 0),
                            accept: "application/json", extra: request.headers))
                ]
                if let body { parts.append(.body(.byteBuffer(ByteBuffer(bytes: body)))) }
                parts.append(.end(nil))
                // A server may answer and close as soon as it has the request: read the answer
                // even if the last write raced with that close.
                var writeError: (any Error)?
                do { try await outbound.write(contentsOf: parts) } catch { writeError = error }
                var response = Response(status: 0, body: [])
                for try await part in inbound {
                    switch part {
                    case .head(let head):
                        response.status = Int(head.status.code)
                        response.location = head.headers.first(name: "Location")
                    case .body(let buffer): response.body += buffer.readableBytesView
                    case .end: return response
                    }
                }
                if let writeError { throw writeError }
                return response
            }
        } catch {
            throw .unavailable("The connection to \(server.text) failed: \(Self.describe(error)).")
        }
        if response.status == 0 { throw .unavailable("The server at \(server.text) closed the connection without answering.") }
        return response
    }

    /// The error a non-2xx response stands for.
    static func error(_ response: Response) -> CLIError {
        var message = String(decoding: response.body, as: UTF8.self)
        var builder = JSONValueBuilder()
        if let json = try? JSONParser().parse(response.body, into: &builder), case .string(let text)? = json["error"] {
            message = text
        }
        let text = "The server refused the request (HTTP \(response.status)): \(message)"
        return response.status == 400 ? .usage(text) : .failure(text)
    }

    /// Opens an event stream at `target` and calls `event` with each event's name and data until
    /// the server closes it (then returns) or the connection fails (then throws). A redirect
    /// (307, 308) is followed before the stream starts (``Redirect``).
    static func stream(_ server: ServerURL, _ target: String, event: @Sendable (String, [UInt8]) throws(CLIError) -> Void)
        async throws(CLIError)
    {
        var request = Redirect.Request(server: server, target: target, headers: [])
        for _ in 0...Redirect.limit {
            guard let location = try await self.openStream(request, event: event) else { return }
            request = try request.following(location)
        }
        throw Redirect.tooMany(from: server)
    }

    /// Follows one event stream; returns the `Location` of a redirect instead, or `nil` when the
    /// stream ended.
    private static func openStream(_ request: Redirect.Request, event: @Sendable (String, [UInt8]) throws(CLIError) -> Void)
        async throws(CLIError) -> String?
    {
        let server = request.server
        let channel = try await self.connect(server)
        do {
            return try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(contentsOf: [
                    .head(Self.head(server, .GET, request.target, bodyLength: nil, accept: "text/event-stream", extra: request.headers)),
                    .end(nil),
                ])
                var parser = EventStreamParser()
                var status = 0
                var location: String?
                var errorBody: [UInt8] = []
                for try await part in inbound {
                    switch part {
                    case .head(let head):
                        status = Int(head.status.code)
                        location = head.headers.first(name: "Location")
                    case .body(let buffer):
                        guard status == 200 else {
                            errorBody += buffer.readableBytesView
                            continue
                        }
                        for (name, data) in parser.feed(buffer.readableBytesView) { try event(name, data) }
                    case .end:
                        if let next = try Redirect.location(of: status, location, from: server) { return next }
                        if status != 200 { throw Self.error(Response(status: status, body: errorBody)) }
                        return nil
                    }
                }
                return nil
            }
        } catch let error as CLIError {
            throw error
        } catch {
            throw .unavailable("The stream from \(server.text) failed: \(Self.describe(error)).")
        }
    }

    /// A short description of a connection error ("connection refused").
    static func describe(_ error: any Error) -> String {
        if let error = error as? NIOConnectionError {
            if let first = error.connectionErrors.first { return self.describe(first.error) }
            if let dns = error.dnsAError ?? error.dnsAAAAError { return "cannot resolve \(error.host) (\(dns))" }
            return "cannot connect to \(error.host):\(error.port)"
        }
        if let error = error as? IOError {
            return String(cString: strerror(error.errnoCode)).lowercased()
        }
        if let error = error as? ChannelError, case .connectTimeout = error { return "the connection timed out" }
        return "\(error)"
    }
}

/// Splits a `text/event-stream` body into events (name and data), LF or CRLF line endings.
struct EventStreamParser {
    private var buffer: [UInt8] = []
    private var name = ""
    private var data: [UInt8] = []
    private var hasData = false

    mutating func feed(_ bytes: some Sequence<UInt8>) -> [(String, [UInt8])] {
        self.buffer += bytes
        var events: [(String, [UInt8])] = []
        var start = 0
        while let newline = self.buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
            var line = self.buffer[start..<newline]
            start = newline + 1
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            if line.isEmpty {
                if self.hasData || !self.name.isEmpty { events.append((self.name.isEmpty ? "message" : self.name, self.data)) }
                self.name = ""
                self.data = []
                self.hasData = false
                continue
            }
            let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
            let field = String(decoding: line[..<colon], as: UTF8.self)
            var value = colon < line.endIndex ? line[(colon + 1)...] : []
            if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
            switch field {
            case "event": self.name = String(decoding: value, as: UTF8.self)
            case "data":
                if self.hasData { self.data.append(UInt8(ascii: "\n")) }
                self.data += value
                self.hasData = true
            default: break
            }
        }
        self.buffer.removeFirst(start)
        return events
    }
}
