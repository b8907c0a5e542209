import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP/1.1 response read off a ``RawSocket``.
struct RawResponse {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
    var text: String { String(decoding: self.body, as: UTF8.self) }
}

/// A keep-alive HTTP/1.1 client on one blocking socket (reconnects when the server closed it).
final class RawHTTPClient {
    let port: Int
    private let timeout: Double
    private var socket: RawSocket?
    private var pending: [UInt8] = []

    init(port: Int, timeout: Double = 10) {
        self.port = port
        self.timeout = timeout
    }

    /// Sends one request and reads its response. A failure drops the connection. A kept-alive
    /// connection that the server closed while idle (nothing of the response came) is replaced
    /// once, as HTTP clients do.
    func request(_ method: String, _ path: String, body: String? = nil, headers: [String: String] = [:]) throws -> RawResponse {
        let reused = self.socket != nil
        do {
            return try self.attempt(method, path, body: body, headers: headers)
        } catch let failure as ToolFailure where reused && failure.description == Self.closedBeforeResponse {
            return try self.attempt(method, path, body: body, headers: headers)
        }
    }

    private static let closedBeforeResponse = "connection closed before the response"

    private func attempt(_ method: String, _ path: String, body: String?, headers: [String: String]) throws -> RawResponse {
        do {
            if self.socket == nil {
                self.socket = try RawSocket(port: self.port, timeout: self.timeout)
                self.pending = []
            }
            let socket = self.socket!
            var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            let bodyBytes = body.map { Array($0.utf8) } ?? []
            if body != nil { head += "Content-Type: application/json\r\nContent-Length: \(bodyBytes.count)\r\n" }
            head += "\r\n"
            do {
                try socket.send(Array(head.utf8) + bodyBytes)
            } catch {
                throw ToolFailure(Self.closedBeforeResponse)
            }
            return try Self.readResponse(socket, pending: &self.pending)
        } catch {
            self.close()
            throw error
        }
    }

    func close() {
        self.socket?.close()
        self.socket = nil
    }

    /// Reads one response (Content-Length or chunked body); `pending` keeps bytes read past it.
    static func readResponse(_ socket: RawSocket, pending: inout [UInt8]) throws -> RawResponse {
        var started = !pending.isEmpty
        func fill() throws {
            let bytes: [UInt8]
            do {
                bytes = try socket.receive()
            } catch let failure as ToolFailure where !started && failure.description.contains("reset") {
                throw ToolFailure(closedBeforeResponse)
            }
            if bytes.isEmpty { throw ToolFailure(started ? "connection closed mid-response" : closedBeforeResponse) }
            started = true
            pending += bytes
        }
        var headEnd = HTTPBytes.find(HTTPBytes.crlfcrlf, in: pending)
        while headEnd == nil {
            try fill()
            headEnd = HTTPBytes.find(HTTPBytes.crlfcrlf, in: pending)
        }
        let (status, headers) = try HTTPBytes.parseHead(pending[0..<headEnd!])
        pending.removeFirst(headEnd! + 4)
        var body: [UInt8] = []
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            var decoder = ChunkedDecoder()
            while !decoder.finished {
                body += try decoder.feed(&pending)
                if !decoder.finished { try fill() }
            }
        } else {
            let length = Int(headers["content-length"] ?? "0") ?? 0
            while pending.count < length { try fill() }
            body = Array(pending[0..<length])
            pending.removeFirst(length)
        }
        return RawResponse(status: status, headers: headers, body: body)
    }
}

enum HTTPBytes {
    static let crlfcrlf: [UInt8] = Array("\r\n\r\n".utf8)
    static let crlf: [UInt8] = Array("\r\n".utf8)

    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int = 0) -> Int? {
        guard haystack.count >= needle.count + start else { return nil }
        var i = start
        let last = haystack.count - needle.count
        while i <= last {
            if haystack[i] == needle[0] {
                var j = 1
                while j < needle.count && haystack[i + j] == needle[j] { j += 1 }
                if j == needle.count { return i }
            }
            i += 1
        }
        return nil
    }

    /// The status and the headers (names lowercased) of a response head.
    static func parseHead(_ bytes: ArraySlice<UInt8>) throws -> (Int, [String: String]) {
        let lines = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw ToolFailure("bad status line: \(lines[0])")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, headers)
    }
}

/// Decodes a chunked body incrementally.
struct ChunkedDecoder {
    private var remaining = 0
    private var needsCRLF = false
    private(set) var finished = false

    /// Decodes what `input` holds, leaving an incomplete chunk header in it.
    mutating func feed(_ input: inout [UInt8]) throws -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while !self.finished {
            if self.remaining > 0 {
                let take = min(self.remaining, input.count - index)
                if take == 0 { break }
                out += input[index..<(index + take)]
                index += take
                self.remaining -= take
                if self.remaining == 0 { self.needsCRLF = true }
                continue
            }
            if self.needsCRLF {
                guard input.count - index >= 2 else { break }
                index += 2
                self.needsCRLF = false
                continue
            }
            guard let lineEnd = HTTPBytes.find(HTTPBytes.crlf, in: input, from: index) else { break }
            let sizeText = String(decoding: input[index..<lineEnd], as: UTF8.self).split(separator: ";")[0]
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                throw ToolFailure("bad chunk size \(sizeText)")
            }
            index = lineEnd + 2
            if size == 0 {
                self.finished = true
            } else {
                self.remaining = size
            }
        }
        input.removeFirst(index)
        return out
    }
}
