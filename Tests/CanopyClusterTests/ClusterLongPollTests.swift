import CanopyCluster
import CanopyCore
import CanopyRemote
import CanopyTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The browser SDK's long polling in a cluster: a start at a node that does not lead the namespace
/// gets the redirect a WebSocket gets; at the leader, the hello.
@Suite(.enabled(if: ClusterHarness.runnable, ClusterHarness.skipReason), .timeLimit(.minutes(3)))
struct ClusterLongPollTests {
    /// GET `target` from `host:port` on a socket of its own (30 s at most); the whole response.
    static func get(host: String, port: Int, _ target: String) throws -> String {
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
        let request = Array("GET \(target) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n\r\n".utf8)
        guard send(fd, request, request.count, 0) == request.count else { throw DatabaseError(.ioError, "send failed: errno \(errno)") }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { break }
            response += buffer[0..<n]
        }
        return String(decoding: response, as: UTF8.self)
    }

    @Test func aStartAtAnotherNodeIsRedirectedToTheLeader() async throws {
        try await ClusterHarness.withDatabase { configuration in
            try await ServeProcess.withNodes(2, configuration) { _, port in
                // Node 1 takes the namespace with a write.
                let client = try ClusterRemoteClientTests.remote("http://127.0.0.1:\(port)?ns=polled")
                defer { client.close() }
                _ = try await client.reference(withPath: "x").setValue(1)

                let redirected = try Self.get(host: "127.0.0.2", port: port, "/.lp?start=t&ser=1&cb=1&v=5&ns=polled")
                #expect(redirected.hasPrefix("HTTP/1.1 200"), "\(redirected)")
                #expect(redirected.contains(#"{"t":"c","d":{"t":"r","d":"127.0.0.1:\#(port)"}}"#), "\(redirected)")
                #expect(!redirected.contains(#""t":"h""#), "no hello from a node that does not lead")

                let served = try Self.get(host: "127.0.0.1", port: port, "/.lp?start=t&ser=2&cb=2&v=5&ns=polled")
                #expect(served.contains(#""t":"h""#) && served.contains(#""h":"127.0.0.1:\#(port)""#), "\(served)")
                #expect(!served.contains(#""t":"r""#))
            }
        }
    }
}
