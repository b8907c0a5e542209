import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A `canopy serve` process of this build (the `canopy` executable beside `canopy-bench`, so
/// `swift build -c release` builds both) on `host:port`, for the scenarios that compare server
/// set-ups (B18.steady) or kill servers (B18.failover). Its standard error goes to `logPath`.
final class CanopyServeProcess: ServerProcess {
    let host: String
    let port: Int
    let arguments: [String]
    let logPath: String
    private var process: Process?

    /// The `canopy` executable beside this one.
    static var executable: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("canopy").path
    }

    /// Starts `canopy serve --host HOST --port PORT ARGUMENTS…` and returns once it accepts
    /// connections.
    init(host: String = "127.0.0.1", port: Int, arguments: [String], logPath: String) throws {
        self.host = host
        self.port = port
        self.arguments = ["serve", "--host", host, "--port", "\(port)"] + arguments
        self.logPath = logPath
        try self.start()
    }

    var pid: Int32 { self.process?.processIdentifier ?? -1 }

    /// Starts the process (again, after ``kill9()``) and waits (60 s at most) until it accepts
    /// connections.
    func start() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw BenchError("\(Self.executable) is missing: build it beside canopy-bench (swift build -c release)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.executable)
        process.arguments = self.arguments
        process.environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        if !FileManager.default.fileExists(atPath: self.logPath) { _ = FileManager.default.createFile(atPath: self.logPath, contents: nil) }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: self.logPath))
        log.seekToEndOfFile()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = log
        try process.run()
        try? log.close()
        self.process = process
        let deadline = monotonicNanos() + 60_000_000_000
        while !acceptsConnections(host: self.host, port: self.port) {
            guard process.isRunning else { throw BenchError("canopy serve on \(self.host):\(self.port) exited; see \(self.logPath)") }
            guard monotonicNanos() < deadline else {
                throw BenchError("canopy serve on \(self.host):\(self.port) did not listen within 60 s")
            }
            usleep(10_000)
        }
    }

    /// The last lines of the process's standard error, on one line.
    var logTail: String {
        let text = (try? String(contentsOfFile: self.logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(3).joined(separator: " / ")
    }

    /// SIGKILL, and waits for the process to be gone.
    func kill9() {
        guard let process = self.process else { return }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        self.process = nil
    }

    /// SIGTERM (a graceful stop), and waits for it.
    func stop() {
        guard let process = self.process else { return }
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
        self.process = nil
    }
}

/// Whether a TCP connection to `host:port` (an IPv4 address) is accepted.
func acceptsConnections(host: String, port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr(host)
    return withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}

/// A free TCP port on the loopback addresses (bound on 127.0.0.1 and released).
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw BenchError("no free port: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}
