import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Many server-sent event streams read by one thread with `poll`: opened in batches, each
/// decoded (chunked transfer encoding, then events) as its bytes come.
final class StreamFanIn {
    /// One stream's connection and what it received.
    final class Stream {
        let socket: RawSocket
        var raw: [UInt8] = []
        var status: Int?
        var decoder = ChunkedDecoder()
        var text: [UInt8] = []
        /// `(event, data)` in arrival order, keep-alives left out.
        var events: [(String, String)] = []
        /// Ended by the server (EOF or reset).
        var ended = false
        /// How it ended, for failure messages: "EOF", or the error `recv` gave.
        var ending = ""
        /// Stopped being read by the test (it drops this one, or pretends to be slow).
        var paused = false

        init(socket: RawSocket) { self.socket = socket }

        /// Decodes what arrived; complete events move to `events`.
        func decode() throws {
            if self.status == nil {
                guard let headEnd = HTTPBytes.find(HTTPBytes.crlfcrlf, in: self.raw) else { return }
                let (status, _) = try HTTPBytes.parseHead(self.raw[0..<headEnd])
                self.status = status
                self.raw.removeFirst(headEnd + 4)
            }
            self.text += try self.decoder.feed(&self.raw)
            var start = 0
            while let end = HTTPBytes.find([0x0A, 0x0A], in: self.text, from: start) {
                let block = String(decoding: self.text[start..<end], as: UTF8.self)
                start = end + 2
                var event = ""
                var data = ""
                for line in block.split(separator: "\n") {
                    if line.hasPrefix("event: ") { event = String(line.dropFirst(7)) }
                    if line.hasPrefix("data: ") { data = String(line.dropFirst(6)) }
                }
                if event != "keep-alive" { self.events.append((event, data)) }
            }
            self.text.removeFirst(start)
        }
    }

    let port: Int
    private(set) var streams: [Stream] = []

    init(port: Int) { self.port = port }

    /// Opens `count` streams on `path`, `batch` at a time, each batch waiting until all its
    /// streams got their first event (so that every later write reaches them).
    func open(_ count: Int, path: String, batch: Int = 100, seconds: Double = 20) throws {
        var opened = 0
        while opened < count {
            let n = min(batch, count - opened)
            var fresh: [Stream] = []
            for _ in 0..<n {
                let socket = try RawSocket(port: self.port, timeout: 10)
                try socket.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
                fresh.append(Stream(socket: socket))
            }
            self.streams += fresh
            let ready = try self.pump(seconds: seconds) { fresh.allSatisfy { !$0.events.isEmpty || $0.ended } }
            guard ready else { throw ToolFailure("streams did not start within \(seconds) s") }
            if let failed = fresh.first(where: { $0.ended || $0.status != 200 }) {
                let status = failed.status.map(String.init) ?? "none"
                throw ToolFailure(
                    "a stream failed to start: status \(status), \(failed.ending.isEmpty ? "open" : "ended: \(failed.ending)"), \(failed.raw.count) bytes unread; stream \(opened + (fresh.firstIndex { $0 === failed } ?? 0) + 1) of \(count)"
                )
            }
            opened += n
        }
    }

    /// Reads whatever arrives on the streams not paused, until `condition` holds (true) or
    /// `seconds` pass (false).
    func pump(seconds: Double, until condition: () -> Bool) throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            if condition() { return true }
            let live = self.streams.filter { !$0.ended && !$0.paused && $0.socket.isOpen }
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return false }
            if live.isEmpty {
                usleep(10_000)
                continue
            }
            var fds = live.map { pollfd(fd: $0.socket.fd, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), Int32(min(remaining, 0.05) * 1000))
            if ready <= 0 { continue }
            for (i, pfd) in fds.enumerated() where pfd.revents != 0 {
                let stream = live[i]
                let n = buffer.withUnsafeMutableBytes { recv(pfd.fd, $0.baseAddress, 65_536, Int32(MSG_DONTWAIT)) }
                if n > 0 {
                    stream.raw += buffer[0..<n]
                    try stream.decode()
                } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                    stream.ended = true
                    stream.ending = n == 0 ? "EOF" : String(cString: strerror(errno))
                }
            }
        }
    }

    /// Closes `stream` and forgets it.
    func remove(_ stream: Stream) {
        stream.socket.close()
        self.streams.removeAll { $0 === stream }
    }

    func closeAll() {
        for stream in self.streams { stream.socket.close() }
        self.streams = []
    }
}
