import CanopyCore
import Foundation
import Synchronization

/// A long-poll client of our own, written from the JS SDK's `BrowserPollConnection`: a start
/// request, then requests carrying base64 segments of the client's messages, each answered with a
/// script that calls `pLPCommand<cb>` / `pRTLPCB<cb>`. Each request is one connection; the test
/// drives them one at a time (or two, as the SDK may), so that what each answer holds is known.
final class LongPollClient: Sendable {
    /// What one answer held.
    enum Reply: Equatable, CustomStringConvertible {
        /// `pRTLPCB(number, [messages])`.
        case messages(number: Int, [JSONValue])
        /// An empty script: the hold ended with nothing to send.
        case nothing
        /// `pLPCommand('close'[, last])`.
        case closed(last: Int?)
        /// Not a script: an HTTP error.
        case failed(status: Int, body: String)

        var description: String {
            switch self {
            case .messages(let number, let messages): "batch \(number): \(messages)"
            case .nothing: "nothing"
            case .closed(let last): "closed after \(last.map(String.init) ?? "none")"
            case .failed(let status, let body): "HTTP \(status): \(body)"
            }
        }
    }

    let port: Int
    let id: String
    let password: String
    let namespace: String
    /// The first batch: the hello (or what came instead).
    let first: [JSONValue]

    private struct Inbox {
        var messages: [JSONValue] = []
        /// The number of the next batch expected.
        var next = 0
        /// The client's next segment number.
        var segment = 0
    }

    private let inbox = Mutex(Inbox())

    /// The callback number the start names.
    static let callback = "7"

    private init(port: Int, id: String, password: String, namespace: String, first: [JSONValue]) {
        self.port = port
        self.id = id
        self.password = password
        self.namespace = namespace
        self.first = first
        self.inbox.withLock { $0.next = 1 }
    }

    /// Starts a session (`host`: the Host header the request carries).
    static func start(port: Int, namespace: String, host: String = "127.0.0.1", extra: String = "") async throws -> LongPollClient {
        let (status, body) = try await Self.get(
            port: port, "/.lp?start=t&ser=\(Int.random(in: 0..<100_000_000))&cb=\(Self.callback)&v=5\(extra)&ns=\(namespace)", host: host)
        guard status == 200 else { throw TestFailure("start answered \(status): \(body)") }
        guard let start = Self.calls(in: body, to: "pLPCommand").first,
            case let arguments = start.split(separator: ",").map({ $0.trimmingCharacters(in: CharacterSet(charactersIn: "' ")) }),
            arguments.count == 3, arguments[0] == "start"
        else { throw TestFailure("no pLPCommand('start', id, pw) in \(body)") }
        guard case .messages(0, let first) = try Self.reply(body) else { throw TestFailure("no batch 0 in \(body)") }
        guard body.contains("parent.window[\"pLPCommand\(Self.callback)\"]"), body.contains("parent.window[\"pRTLPCB\(Self.callback)\"]")
        else {
            throw TestFailure("the script does not call the page's callbacks \(Self.callback): \(body)")
        }
        return LongPollClient(port: port, id: arguments[1], password: arguments[2], namespace: namespace, first: first)
    }

    /// The hello's payload (`{"ts","v","h","s"}`).
    var hello: JSONValue? {
        guard let message = self.first.first, message["t"] == .string("c"), message["d"]?["t"] == .string("h") else { return nil }
        return message["d"]?["d"]
    }

    // MARK: Requests

    /// A poll carrying `segments` (`(seg, ts, d)`, the SDK's parameters), or none.
    func request(segments: [(Int, Int, String)] = [], password: String? = nil, extra: String = "") async throws -> Reply {
        var target = "/.lp?id=\(self.id)&pw=\(password ?? self.password)&ser=\(Int.random(in: 0..<100_000_000))&ns=\(self.namespace)"
        for (i, segment) in segments.enumerated() { target += "&seg\(i)=\(segment.0)&ts\(i)=\(segment.1)&d\(i)=\(segment.2)" }
        target += extra
        let (status, body) = try await Self.get(port: self.port, target)
        guard status == 200 else { return .failed(status: status, body: body) }
        let reply = try Self.reply(body)
        if case .messages(let number, let messages) = reply {
            try self.inbox.withLock { inbox in
                guard number == inbox.next else { throw TestFailure("batch \(number) came when \(inbox.next) was next") }
                inbox.next += 1
                inbox.messages += messages
            }
        }
        return reply
    }

    /// The segments of `message` as the SDK cuts them (`size` base64 characters each), numbered on
    /// from the client's last.
    func segments(of message: String, size: Int = 1840) -> [(Int, Int, String)] {
        let base64 = Self.webSafeBase64(message)
        var pieces: [String] = []
        var rest = Substring(base64)
        while !rest.isEmpty {
            pieces.append(String(rest.prefix(size)))
            rest = rest.dropFirst(size)
        }
        return self.inbox.withLock { inbox in
            defer { inbox.segment += pieces.count }
            return pieces.enumerated().map { (inbox.segment + $0.offset, pieces.count, $0.element) }
        }
    }

    /// Sends `message` in one request (the SDK sends a segment per request; this client puts them
    /// all in one unless told otherwise); returns the answer.
    @discardableResult
    func send(_ message: String) async throws -> Reply {
        try await self.request(segments: self.segments(of: message))
    }

    /// The next message received, polling until one comes.
    func next() async throws -> JSONValue {
        while true {
            let message: JSONValue? = self.inbox.withLock { inbox in inbox.messages.isEmpty ? nil : inbox.messages.removeFirst() }
            if let message { return message }
            let reply = try await within(30, "a long-poll answer") { try await self.request() }
            switch reply {
            case .messages, .nothing: continue
            case .closed, .failed: throw TestFailure("the session ended while a message was awaited: \(reply)")
            }
        }
    }

    /// The next messages until one answers request `r`; returns them all (the answer last).
    func answer(to r: Int) async throws -> (answer: JSONValue, before: [JSONValue]) {
        var before: [JSONValue] = []
        while true {
            let message = try await self.next()
            if message["d"]?["r"]?.int64Value == Int64(r) { return (message, before) }
            before.append(message)
        }
    }

    // MARK: Parsing

    /// A plain GET on a connection of its own.
    static func get(port: Int, _ target: String, host: String = "127.0.0.1") async throws -> (Int, String) {
        let connection = try await RawConnection.connect(port: port)
        defer { Task { await connection.close() } }
        try await connection.send("GET", target, host: host, headers: [("Connection", "close")])
        let (head, body) = try await within(60, "the answer to \(target)") { try await connection.readResponse() }
        return (head.status, body)
    }

    /// The argument lists of the calls to `function` at the start of a line of `script`.
    static func calls(in script: String, to function: String) -> [String] {
        script.components(separatedBy: "\n").filter { $0.hasPrefix(function + "(") }.map { line in
            String(line.dropFirst(function.count + 1).dropLast(2))
        }
    }

    static func reply(_ script: String) throws -> Reply {
        if script.isEmpty { return .nothing }
        if let close = Self.calls(in: script, to: "pLPCommand").first(where: { $0.hasPrefix("'close'") }) {
            let parts = close.split(separator: ",")
            return .closed(last: parts.count > 1 ? Int(parts[1]) : nil)
        }
        let batches = Self.calls(in: script, to: "pRTLPCB")
        guard batches.count == 1, let comma = batches[0].firstIndex(of: ","), let number = Int(batches[0][..<comma]) else {
            throw TestFailure("not one pRTLPCB(number, [messages]) call: \(script)")
        }
        guard case .array(let messages) = try json(String(batches[0][batches[0].index(after: comma)...])) else {
            throw TestFailure("the messages are not an array: \(script)")
        }
        return .messages(number: number, messages)
    }

    /// Base64 with the SDK's web-safe alphabet (`-`, `_`, `.` for padding).
    static func webSafeBase64(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: ".")
    }
}
