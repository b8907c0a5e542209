import CanopyCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One HTTP/1.1 request to a node on a socket of its own (30 s at most), redirects not followed:
/// what the cluster tests check a node answers itself.
struct NodeHTTP {
    var status: Int
    var headers: [String: String]
    var body: String

    /// The whole response as text.
    var raw: String

    /// Sends `method target` to `host:port` with `body` and `headers`.
    static func request(
        _ method: String, host: String, port: Int, _ target: String, body: String? = nil, headers: [String: String] = [:]
    ) throws -> NodeHTTP {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host)
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { throw DatabaseError(.ioError, "cannot connect to \(host):\(port): errno \(errno)") }
        var text = "\(method) \(target) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body { text += "Content-Length: \(body.utf8.count)\r\n\r\n\(body)" } else { text += "\r\n" }
        let request = Array(text.utf8)
        guard send(fd, request, request.count, 0) == request.count else { throw DatabaseError(.ioError, "send failed: errno \(errno)") }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { break }
            response += buffer[0..<n]
        }
        let raw = String(decoding: response, as: UTF8.self)
        let parts = raw.components(separatedBy: "\r\n\r\n")
        let head = parts.first?.components(separatedBy: "\r\n") ?? []
        let status = head.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        var fields: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return NodeHTTP(status: status, headers: fields, body: parts.dropFirst().joined(separator: "\r\n\r\n"), raw: raw)
    }
}
