import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking TCP client socket on loopback, for load and fault tests: byte-level control of
/// what is sent and when, and of how the connection ends (FIN, or RST with `SO_LINGER` 0).
/// One thread at a time.
final class RawSocket {
    private(set) var fd: Int32

    /// Connects to `127.0.0.1:port`. `receiveBuffer` (bytes, set before connecting) shrinks the
    /// kernel's receive buffer, for a client that stops reading; `timeout` bounds every receive.
    init(port: Int, receiveBuffer: Int? = nil, timeout: Double = 10) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ToolFailure("socket: \(String(cString: strerror(errno)))") }
        self.fd = fd
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let message = String(cString: strerror(errno))
            Glibc.close(fd)
            self.fd = -1
            throw ToolFailure("connect to port \(port): \(message)")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        self.setTimeout(timeout)
    }

    /// A connection a listening socket accepted (``RedirectServer``).
    init(accepted fd: Int32, timeout: Double = 10) {
        self.fd = fd
        self.setTimeout(timeout)
    }

    deinit { self.close() }

    var isOpen: Bool { self.fd >= 0 }

    func setTimeout(_ seconds: Double) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1_000_000))
        setsockopt(self.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(self.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends every byte (throws when the peer closed or reset the connection).
    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(self.fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ToolFailure("send: \(String(cString: strerror(errno)))")
            }
            sent += n
        }
    }

    func send(_ text: String) throws { try self.send(Array(text.utf8)) }

    /// What the peer sent, at most `max` bytes, waiting for some; empty at end of stream.
    /// Throws on a reset or when the receive timeout passes.
    func receive(max: Int = 65_536) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(self.fd, $0.baseAddress, max, 0) }
            if n >= 0 { return Array(buffer[0..<n]) }
            if errno == EINTR { continue }
            throw ToolFailure(errno == EAGAIN ? "receive timed out" : "receive: \(String(cString: strerror(errno)))")
        }
    }

    /// Bytes received by the kernel and not yet read.
    var pendingBytes: Int {
        var count: Int32 = 0
        _ = withUnsafeMutablePointer(to: &count) { ioctl(self.fd, UInt(FIONREAD), $0) }
        return Int(count)
    }

    /// Whether the peer has ended the connection (EOF or reset), without consuming data:
    /// waits up to `seconds` for the socket to become readable, then peeks.
    func peerClosed(within seconds: Double) -> Bool {
        var pfd = pollfd(fd: self.fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, Int32(seconds * 1000)) > 0 else { return false }
        var byte: UInt8 = 0
        let n = recv(self.fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)
    }

    /// Makes `close` reset the connection (RST) instead of ending it (FIN).
    func resetOnClose() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(self.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    }

    func close() {
        if self.fd >= 0 {
            Glibc.close(self.fd)
            self.fd = -1
        }
    }
}

/// Raises this process's open-file soft limit to its hard limit (a thousand streams need
/// a thousand descriptors on each side).
func raiseOpenFileLimit() {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

/// The open-file soft limit of this process.
func openFileLimit() -> Int {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
    return Int(clamping: limit.rlim_cur)
}
