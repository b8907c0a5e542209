import Canopy
import CanopyCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// The plumbing of the bad-input matrix (BadInputMatrix.swift): the row types, a blocking
// HTTP/1.1 client over loopback, JSON tree comparison.

/// How an error message is checked.
enum ExpectedMessage: Sendable, CustomStringConvertible {
    /// The whole message.
    case exact(String)
    /// A stable beginning (for messages that end with data, e.g. a 10 MiB string's excerpt).
    case prefix(String)

    func matches(_ text: String) -> Bool {
        switch self {
        case .exact(let m): return text == m
        case .prefix(let p): return text.hasPrefix(p)
        }
    }

    var description: String {
        switch self {
        case .exact(let m): return m
        case .prefix(let p): return p + "…"
        }
    }
}

/// The library's part of a row: what to call on a database holding the seed tree.
struct LibraryStep: Sendable {
    enum Expect: Sendable {
        /// Throws a `DatabaseError` with this code and message.
        case error(DatabaseError.Code, ExpectedMessage)
        /// Succeeds; afterwards `/probe` holds this JSON (nil: unchanged).
        case accepted(probe: String?)
    }

    var run: @Sendable (Database) async throws -> Void
    var expect: Expect
}

/// The command line's part of a row: `canopy ARGUMENTS --db DIR`, with files written first
/// (`@NAME` in an argument is replaced by the file's path).
struct CLIStep: Sendable {
    enum Expect: Sendable {
        /// Exits with this status and prints exactly one line, `canopy: <message>`, on stderr.
        case error(Int32, ExpectedMessage)
        /// Exits 0 printing `stdout` (when given); afterwards `/probe` holds `probe` (nil: unchanged).
        case accepted(stdout: String?, probe: String?)
    }

    var arguments: [String]
    var files: [String: [UInt8]] = [:]
    /// false: a command that takes no `--db` (`rules test` works offline on its own files).
    var usesDatabase = true
    var expect: Expect
}

/// The REST part of a row: one request to `canopy serve`.
struct RESTStep: Sendable {
    enum Expect: Sendable {
        /// This status with the body `{"error": <message>}` (a nil message: an empty body, as for HEAD).
        case error(Int, ExpectedMessage?)
        /// This status and body (when given); afterwards `/probe` holds `probe` (nil: unchanged).
        case accepted(status: Int, body: String?, probe: String?)
    }

    var method: String
    var target: String
    var body: [UInt8]?
    /// Extra header lines (a `Content-Length` here replaces the body's).
    var headers: [(String, String)] = []
    /// false: declare the body but do not send it (a huge Content-Length).
    var sendsBody = true
    var expect: Expect
}

/// One mistake, and what each entry point answers to it (nil: the entry point has no way to
/// make this mistake, or it is not a mistake there — see the row's note).
struct MatrixRow: Sendable, CustomStringConvertible {
    var name: String
    var library: LibraryStep?
    var cli: CLIStep?
    var rest: RESTStep?
    var note: String = ""

    var description: String { self.name }
}

// MARK: - JSON trees

func parseTree(_ text: String) -> JSONValue? {
    var builder = JSONValueBuilder()
    return try? JSONParser().parse(text, into: &builder)
}

/// The seed with `/probe` set to `probe` (JSON text; nil: no probe).
func expectedTree(seed: String, probe: String?) -> JSONValue? {
    guard case .object(var members)? = parseTree(seed) else { return nil }
    if let probe {
        guard let value = parseTree(probe) else { return nil }
        members["probe"] = value
    }
    return .object(members)
}

// MARK: - A blocking HTTP/1.1 client

struct HTTPReply: CustomStringConvertible {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    var text: String { String(decoding: self.body, as: UTF8.self) }
    var description: String { "\(self.status) \(self.text.prefix(300))" }

    /// The `error` member of a `{"error": …}` body.
    var errorMessage: String? {
        guard case .object(let members)? = parseTree(self.text), members.count == 1, case .string(let message)? = members["error"] else {
            return nil
        }
        return message
    }
}

struct HTTPFailure: Error, CustomStringConvertible {
    var description: String
}

/// One request on a fresh connection (`Connection: close`), the response read to the end.
func httpRequest(port: Int, method: String, target: String, body: [UInt8]? = nil, headers: [(String, String)] = [], sendsBody: Bool = true)
    throws -> HTTPReply
{
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw HTTPFailure(description: "socket failed") }
    defer { close(fd) }
    var timeout = timeval(tv_sec: 20, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { throw HTTPFailure(description: "connect to port \(port) failed: errno \(errno)") }
    var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
    for (name, value) in headers { head += "\(name): \(value)\r\n" }
    if let body, !headers.contains(where: { $0.0.lowercased() == "content-length" }) { head += "Content-Length: \(body.count)\r\n" }
    head += "\r\n"
    var out = Array(head.utf8)
    if let body, sendsBody { out += body }
    var sent = 0
    while sent < out.count {
        let n = out[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if n <= 0 { break }  // the server may answer (413) and close before reading everything
        sent += n
    }
    if !sendsBody { shutdown(fd, Int32(SHUT_WR)) }
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    let started = ContinuousClock.now
    var ending = "the server closed the connection"
    while true {
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 {
            if errno == EINTR { continue }
            ending = errno == EAGAIN || errno == EWOULDBLOCK ? "nothing received for 20 s" : "recv: \(String(cString: strerror(errno)))"
        }
        if n <= 0 { break }
        response += buffer[..<n]
    }
    do {
        return try parseResponse(response, method: method)
    } catch {
        throw HTTPFailure(
            description:
                "\(method) \(target.prefix(80)): \(error); \(ending) after \(started.duration(to: .now)), \(sent) of \(out.count) bytes sent"
        )
    }
}

private func parseResponse(_ bytes: [UInt8], method: String) throws -> HTTPReply {
    let separator: [UInt8] = [13, 10, 13, 10]
    guard let end = (0..<max(0, bytes.count - 3)).first(where: { Array(bytes[$0..<$0 + 4]) == separator }) else {
        throw HTTPFailure(description: "no complete response head: \(String(decoding: bytes.prefix(200), as: UTF8.self))")
    }
    let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
    let statusParts = lines[0].split(separator: " ")
    guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw HTTPFailure(description: "bad status line \(lines[0])") }
    var headers: [(String, String)] = []
    for line in lines.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers.append((line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
    }
    var body = Array(bytes[(end + 4)...])
    if method == "HEAD" { body = [] }
    if headers.contains(where: { $0.0 == "transfer-encoding" && $0.1.lowercased().contains("chunked") }) {
        var decoded: [UInt8] = []
        var rest = body[...]
        while let lineEnd = rest.indices.first(where: { rest[$0] == 10 }) {
            let sizeText = String(decoding: rest[rest.startIndex..<lineEnd], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16), size > 0 else { break }
            let start = lineEnd + 1
            guard start + size <= rest.endIndex else { break }
            decoded += rest[start..<start + size]
            rest = rest[min(rest.endIndex, start + size + 2)...]
        }
        body = decoded
    } else if let length = headers.first(where: { $0.0 == "content-length" }).flatMap({ Int($0.1) }), length <= body.count {
        body = Array(body[..<length])
    }
    return HTTPReply(status: status, headers: headers, body: body)
}

/// The port of `http://127.0.0.1:PORT`.
func serverPort(of url: String) -> Int? {
    url.split(separator: ":").last.flatMap { Int($0.filter(\.isNumber)) }
}
