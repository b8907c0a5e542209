import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback HTTP server that answers every request with `307 Temporary Redirect` to the
/// `Location` that `location` gives for the request's target, and records what it was sent. One
/// thread, one connection at a time, each closed after its answer.
final class RedirectServer: Sendable {
    struct Received: Sendable, Equatable {
        var method: String
        var target: String
        var body: String
        var accept: String?
        var authorization: String?
    }

    let port: Int
    private let listener: Int32
    private let received = Mutex<[Received]>([])

    init(location: @escaping @Sendable (String) -> String) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ToolFailure("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound, listen(fd, 16) == 0 else {
            Glibc.close(fd)
            throw ToolFailure("bind/listen: \(String(cString: strerror(errno)))")
        }
        self.listener = fd
        self.port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in
            while true {
                let client = accept(fd, nil, nil)
                guard client >= 0 else {
                    if errno == EINTR { continue }
                    return  // the listener was shut down
                }
                let socket = RawSocket(accepted: client)
                if let request = try? Self.read(socket) {
                    self.received.withLock { $0.append(request) }
                    try? socket.send(
                        "HTTP/1.1 307 Temporary Redirect\r\nLocation: \(location(request.target))\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    )
                }
                socket.close()
            }
        }.start()
    }

    /// The requests answered so far, in order.
    var requests: [Received] { self.received.withLock { $0 } }

    /// Stops accepting connections.
    func stop() {
        shutdown(self.listener, Int32(SHUT_RDWR))
        Glibc.close(self.listener)
    }

    /// One request: its head, and its body by `Content-Length`.
    private static func read(_ socket: RawSocket) throws -> Received {
        var bytes: [UInt8] = []
        let separator = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            let chunk = try socket.receive()
            guard !chunk.isEmpty else { throw ToolFailure("closed before the request's head") }
            bytes += chunk
            headEnd = bytes.indices.first { bytes[$0...].starts(with: separator) }
        }
        let head = String(decoding: bytes[..<headEnd!], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = head[0].split(separator: " ")
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Array(bytes[(headEnd! + separator.count)...])
        let length = headers["content-length"].flatMap { Int($0) } ?? 0
        while body.count < length {
            let chunk = try socket.receive()
            guard !chunk.isEmpty else { break }
            body += chunk
        }
        return Received(
            method: String(requestLine[0]), target: String(requestLine[1]), body: String(decoding: body, as: UTF8.self),
            accept: headers["accept"], authorization: headers["authorization"])
    }
}
