import CanopyTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("The tests' fault proxy forwards, stalls, delays, drops and refuses", .serialized)
struct FaultProxyTests {
    @Test("bytes go through unchanged and in order, both ways")
    func echo() throws {
        try throughProxy { proxy, echo in
            let client = try TestSocket(port: proxy.port)
            defer { client.close() }
            var generator = SeededGenerator(seed: 7)
            let sent = (0..<200_000).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            for start in stride(from: 0, to: sent.count, by: 7_000) {
                #expect(sendAll(client.fd, Array(sent[start..<min(start + 7_000, sent.count)])))
            }
            #expect(try client.read(sent.count) == sent)
            #expect(proxy.connectionsAccepted == 1)
            #expect(echo.connectionsAccepted == 1)
        }
    }

    @Test("a stall holds the bytes; un-stalled, they arrive in order")
    func stall() throws {
        try throughProxy { proxy, echo in
            let client = try TestSocket(port: proxy.port)
            defer { client.close() }
            #expect(sendAll(client.fd, Array("hello ".utf8)))
            #expect(try client.read(6) == Array("hello ".utf8))
            proxy.stall(true)
            #expect(sendAll(client.fd, Array("stalled ".utf8)))
            #expect(sendAll(client.fd, Array("bytes".utf8)))
            try waitUntil("the proxy to hold the bytes") { proxy.heldBytes == 13 }
            #expect(client.availableNow() == 0)
            proxy.stall(false)
            #expect(try client.read(13) == Array("stalled bytes".utf8))
            #expect(proxy.heldBytes == 0)
        }
    }

    @Test("a delay delivers each chunk late, in order")
    func delay() throws {
        try throughProxy { proxy, echo in
            proxy.delay(milliseconds: 30)
            let client = try TestSocket(port: proxy.port)
            defer { client.close() }
            let start = Date()
            var expected: [UInt8] = []
            for n in 0..<20 {
                let chunk = Array("chunk \(n);".utf8)
                expected += chunk
                #expect(sendAll(client.fd, chunk))
            }
            #expect(try client.read(expected.count) == expected)
            // Each byte crossed the proxy twice, each time at least 30 ms after it was read.
            #expect(Date().timeIntervalSince(start) >= 0.06)
        }
    }

    @Test("dropAll cuts every connection; the proxy still accepts new ones")
    func drop() throws {
        try throughProxy { proxy, echo in
            let first = try TestSocket(port: proxy.port)
            let second = try TestSocket(port: proxy.port)
            defer {
                first.close()
                second.close()
            }
            for client in [first, second] {
                #expect(sendAll(client.fd, [1, 2, 3]))
                #expect(try client.read(3) == [1, 2, 3])
            }
            proxy.stall(true)
            #expect(sendAll(first.fd, [4, 5]))
            try waitUntil("the proxy to hold the bytes") { proxy.heldBytes == 2 }
            proxy.dropAll()
            proxy.stall(false)
            #expect(try first.readToEnd().isEmpty)  // the held bytes were discarded
            #expect(try second.readToEnd().isEmpty)
            try waitUntil("the links to close") { proxy.openConnections == 0 && echo.openConnections == 0 }
            let third = try TestSocket(port: proxy.port)
            defer { third.close() }
            #expect(sendAll(third.fd, [6]))
            #expect(try third.read(1) == [6])
            #expect(proxy.connectionsAccepted == 3)
        }
    }

    @Test("refusing closes new connections at once; retargeting sends new ones elsewhere")
    func refuseAndRetarget() throws {
        let echo = try EchoServer()
        let other = try EchoServer()
        let proxy = try FaultProxy(target: echo.port)
        defer {
            proxy.stop()
            echo.stop()
            other.stop()
        }
        proxy.refuse(true)
        let refused = try TestSocket(port: proxy.port)
        defer { refused.close() }
        #expect(try refused.readToEnd().isEmpty)
        #expect(proxy.connectionsAccepted == 1)
        #expect(echo.connectionsAccepted == 0)
        proxy.refuse(false)
        proxy.retarget(other.port)
        let client = try TestSocket(port: proxy.port)
        defer { client.close() }
        #expect(sendAll(client.fd, [9, 8]))
        #expect(try client.read(2) == [9, 8])
        #expect(other.connectionsAccepted == 1)
        #expect(echo.connectionsAccepted == 0)
    }
}

/// Runs `body` with an echo server behind a new proxy; stops both after.
private func throughProxy(_ body: (FaultProxy, EchoServer) throws -> Void) throws {
    let echo = try EchoServer()
    let proxy = try FaultProxy(target: echo.port)
    defer {
        proxy.stop()
        echo.stop()
    }
    try body(proxy, echo)
}

/// A client socket for the proxy's tests, with bounded reads.
struct TestSocket {
    let fd: Int32

    init(port: Int) throws {
        guard let fd = connectLoopback(port: port) else { throw FaultTestError("cannot connect to port \(port)") }
        var timeout = timeval(tv_sec: Int(defaultWaitSeconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        self.fd = fd
    }

    /// Reads exactly `count` bytes (throws at the end of the stream or after the timeout).
    func read(_ count: Int) throws -> [UInt8] {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while result.count < count {
            let n = buffer.withUnsafeMutableBytes { recv(self.fd, $0.baseAddress, min($0.count, count - result.count), 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw FaultTestError("read \(result.count) of \(count) bytes, then \(n < 0 ? "errno \(errno)" : "the end")")
            }
            result += buffer[0..<n]
        }
        return result
    }

    /// Reads until the peer closes (an orderly end or a reset); returns what came first.
    func readToEnd() throws -> [UInt8] {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(self.fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                throw WaitTimedOut("the connection to close", seconds: defaultWaitSeconds)
            }
            if n <= 0 { return result }
            result += buffer[0..<n]
        }
    }

    /// The bytes readable without waiting.
    func availableNow() -> Int {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { recv(self.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        return max(n, 0)
    }

    func close() { Glibc.close(self.fd) }
}

/// A loopback server echoing every connection's bytes back, on a thread per connection.
final class EchoServer: Sendable {
    let port: Int
    private let listener: Int32
    private let state = Locked<(accepted: Int, open: Int, fds: [Int32])>((0, 0, []))
    private let acceptor = DispatchGroup()

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = loopbackAddress(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 16) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard listener >= 0, ok else { throw FaultTestError("echo server: errno \(errno)") }
        self.listener = listener
        self.port = Int(UInt16(bigEndian: address.sin_port))
        let state = self.state
        self.acceptor.enter()
        Thread { [acceptor = self.acceptor] in
            defer { acceptor.leave() }
            while true {
                let fd = accept(listener, nil, nil)
                if fd < 0 {
                    if errno == EINTR { continue }
                    return
                }
                state.withLock {
                    $0.accepted += 1
                    $0.open += 1
                    $0.fds.append(fd)
                }
                Thread {
                    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
                    while true {
                        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                        if n < 0 && errno == EINTR { continue }
                        if n <= 0 || !sendAll(fd, Array(buffer[0..<n])) { break }
                    }
                    // Closed under the lock that stop() shuts descriptors down under, so it never
                    // shuts down a descriptor reused by another test's socket.
                    state.withLock {
                        $0.open -= 1
                        $0.fds.removeAll { $0 == fd }
                        Glibc.close(fd)
                    }
                }.start()
            }
        }.start()
    }

    var connectionsAccepted: Int { self.state.value.accepted }
    var openConnections: Int { self.state.value.open }

    /// Stops accepting and ends every connection; waits for them to close.
    func stop() {
        shutdown(self.listener, Int32(SHUT_RDWR))
        try? self.acceptor.wait(for: "the echo server to stop accepting")
        Glibc.close(self.listener)
        self.state.withLock { state in
            for fd in state.fds { shutdown(fd, Int32(SHUT_RDWR)) }
        }
        try? waitUntil("the echo connections to close") { self.state.value.open == 0 }
    }
}
