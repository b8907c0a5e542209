import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback TCP proxy for fault tests: listens on a free 127.0.0.1 port and forwards every
/// connection to a target port, byte-exact and in order both ways, until a test cuts, stalls,
/// delays or refuses connections.
///
/// Each connection has a reader and a writer thread per direction: the reader queues what it
/// reads (with the time it may be delivered), the writer delivers the queue in order once it is
/// due and the proxy is not stalled. Every control is thread-safe.
// @unchecked Sendable: every mutable property is guarded by `condition`.
final class FaultProxy: @unchecked Sendable {
    /// The port clients connect to.
    let port: Int
    private let listener: Int32
    private let condition = NSCondition()
    private var targetPort: Int
    private var isStalled = false
    private var isRefusing = false
    private var delaySeconds = 0.0
    private var isStopped = false
    private var links: [ProxyLink] = []
    private var accepted = 0
    private var acceptorDone = false

    /// Starts forwarding to `127.0.0.1:targetPort`.
    init(target targetPort: Int) throws {
        self.targetPort = targetPort
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw FaultTestError("socket: errno \(errno)") }
        var address = loopbackAddress(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            close(listener)
            throw FaultTestError("bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.listener = listener
        self.port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in self.acceptLoop() }
        thread.start()
    }

    // MARK: - Controls

    /// Cuts every current connection abruptly (both sides reset); queued bytes are discarded.
    func dropAll() {
        // Under the lock: a link's last thread closes its sockets under it too, so an abort never
        // reaches a descriptor already closed (and perhaps reused by another test's socket).
        self.locked {
            for link in self.links {
                link.isDropped = true
                link.abort()
            }
            self.condition.broadcast()
        }
    }

    /// Stops forwarding both ways without closing (`true`); bytes are held and delivered in
    /// order once un-stalled (`false`), or discarded if the connection is dropped meanwhile.
    func stall(_ stalled: Bool) {
        self.locked {
            self.isStalled = stalled
            self.condition.broadcast()
        }
    }

    /// Delivers each chunk `milliseconds` after it was read, in order (0: at once).
    func delay(milliseconds: Int) {
        self.locked { self.delaySeconds = Double(milliseconds) / 1000 }
    }

    /// While `true`, new connections are accepted and closed at once.
    func refuse(_ refusing: Bool) {
        self.locked { self.isRefusing = refusing }
    }

    /// Sends new connections to `port` (a restarted server).
    func retarget(_ port: Int) {
        self.locked { self.targetPort = port }
    }

    /// The connections accepted so far (refused ones included).
    var connectionsAccepted: Int { self.locked { self.accepted } }

    /// The connections forwarding now.
    var openConnections: Int { self.locked { self.links.count } }

    /// The bytes read from either side and not yet delivered (held by a stall or a delay).
    var heldBytes: Int {
        self.locked { self.links.reduce(0) { $0 + $1.directions.reduce(0) { $0 + $1.queue.reduce(0) { $0 + ($1.bytes?.count ?? 0) } } } }
    }

    /// Cuts every connection and stops listening; waits for the accepting thread to end.
    func stop() {
        let wasStopped = self.locked { () -> Bool in
            defer { self.isStopped = true }
            return self.isStopped
        }
        guard !wasStopped else { return }
        shutdown(self.listener, Int32(SHUT_RDWR))
        self.dropAll()
        self.locked {
            while !self.acceptorDone || !self.links.isEmpty { self.condition.wait() }
        }
        close(self.listener)
    }

    // MARK: - Forwarding

    private func locked<T>(_ body: () -> T) -> T {
        self.condition.lock()
        defer { self.condition.unlock() }
        return body()
    }

    private func acceptLoop() {
        while true {
            let client = accept(self.listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                break
            }
            let (refusing, stopped, target) = self.locked { () -> (Bool, Bool, Int) in
                self.accepted += 1
                return (self.isRefusing, self.isStopped, self.targetPort)
            }
            if stopped {
                close(client)
                break
            }
            if refusing {
                resetAndClose(client)
                continue
            }
            guard let upstream = connectLoopback(port: target) else {
                resetAndClose(client)
                continue
            }
            let link = ProxyLink(client: client, upstream: upstream)
            self.locked {
                self.links.append(link)
                link.isDropped = self.isStopped
                if link.isDropped { link.abort() }
            }
            for (from, to, direction) in [(client, upstream, link.directions[0]), (upstream, client, link.directions[1])] {
                Thread { [self] in self.read(from, into: direction, link) }.start()
                Thread { [self] in self.write(direction, to: to, link) }.start()
            }
        }
        self.locked {
            self.acceptorDone = true
            self.condition.broadcast()
        }
    }

    /// Reads `fd` into `direction`'s queue until the end (queued as `nil`) or an error (which cuts the link).
    private func read(_ fd: Int32, into direction: ProxyDirection, _ link: ProxyLink) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            let failed = self.locked { () -> Bool in
                if link.isDropped { return true }
                if count < 0 {
                    link.isDropped = true
                    link.abort()
                }
                let due = Date().addingTimeInterval(self.delaySeconds)
                direction.queue.append((due, count > 0 ? Array(buffer[0..<count]) : nil))
                self.condition.broadcast()
                return count < 0
            }
            if count <= 0 || failed { break }
        }
        self.finished(link)
    }

    /// Delivers `direction`'s queue to `fd` in order, each chunk once due and not stalled; at the
    /// end of the queue, half-closes `fd`.
    private func write(_ direction: ProxyDirection, to fd: Int32, _ link: ProxyLink) {
        while true {
            self.condition.lock()
            var chunk: [UInt8]?? = nil
            while !link.isDropped {
                if !self.isStalled, let head = direction.queue.first {
                    if head.due <= Date() {
                        chunk = head.bytes
                        direction.queue.removeFirst()
                        break
                    }
                    _ = self.condition.wait(until: head.due)
                } else {
                    self.condition.wait()
                }
            }
            self.condition.unlock()
            guard let chunk else { break }  // dropped
            guard let bytes = chunk else {
                shutdown(fd, Int32(SHUT_WR))
                break
            }
            if !sendAll(fd, bytes) {
                self.locked {
                    link.isDropped = true
                    link.abort()
                }
                break
            }
        }
        self.finished(link)
    }

    /// One of a link's four threads ended; the last one closes its sockets.
    private func finished(_ link: ProxyLink) {
        self.locked {
            link.threads -= 1
            guard link.threads == 0 else { return }
            self.links.removeAll { $0 === link }
            link.close()
            self.condition.broadcast()
        }
    }
}

/// A forwarded connection: the client's socket and the target's.
// @unchecked Sendable: `isDropped`, `isClosed` and `threads` are guarded by the proxy's condition; the sockets never change.
private final class ProxyLink: @unchecked Sendable {
    let client: Int32
    let upstream: Int32
    var isDropped = false
    var threads = 4
    /// Client to target, target to client.
    let directions = [ProxyDirection(), ProxyDirection()]

    init(client: Int32, upstream: Int32) {
        self.client = client
        self.upstream = upstream
    }

    /// Whether ``close()`` ran: the descriptors may belong to another socket by now.
    var isClosed = false

    /// Resets both sockets (linger 0) and wakes the threads blocked on them; nothing once closed.
    /// Called with the proxy's lock held, as ``close()`` is.
    func abort() {
        guard !self.isClosed else { return }
        for fd in [self.client, self.upstream] {
            setLingerZero(fd)
            shutdown(fd, Int32(SHUT_RDWR))
        }
    }

    /// Closes both sockets (by the link's last thread, with the proxy's lock held).
    func close() {
        self.isClosed = true
        Glibc.close(self.client)
        Glibc.close(self.upstream)
    }
}

/// One direction's bytes read and not yet delivered, oldest first (`nil`: the end of the stream).
// @unchecked Sendable: `queue` is guarded by the proxy's condition.
private final class ProxyDirection: @unchecked Sendable {
    var queue: [(due: Date, bytes: [UInt8]?)] = []
}

/// A fault test's own failure (a socket, a child process, a checker's read).
struct FaultTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func loopbackAddress(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
}

/// A connected socket to `127.0.0.1:port`, or `nil` when nothing listens there.
func connectLoopback(port: Int) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = loopbackAddress(port: port)
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else {
        close(fd)
        return nil
    }
    var one: Int32 = 1
    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    return fd
}

private func setLingerZero(_ fd: Int32) {
    var option = linger(l_onoff: 1, l_linger: 0)
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
}

private func resetAndClose(_ fd: Int32) {
    setLingerZero(fd)
    close(fd)
}

/// Writes all of `bytes`; `false` when the socket failed.
func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let count = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
        if count < 0 {
            if errno == EINTR { continue }
            return false
        }
        offset += count
    }
    return true
}
