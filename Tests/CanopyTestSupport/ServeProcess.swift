import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A `canopy serve` child process on `host:port`, for the tests and benchmarks that run, kill and
/// restart servers (cluster nodes among them).
public final class ServeProcess: @unchecked Sendable {
    // @unchecked Sendable: `process` changes only in the owner's own calls, one at a time.
    public let host: String
    public let port: Int
    public let arguments: [String]
    /// Where the process's standard error goes (appended to across restarts), or `nil` for nowhere.
    public let logPath: String?
    let executable: String
    private var process: ChildProcess?

    /// Starts `EXECUTABLE serve --host HOST --port PORT ARGUMENTS…` and returns once it accepts
    /// connections (a cluster node binds its port once it registered).
    public init(executable: String, host: String = "127.0.0.1", port: Int, arguments: [String], logPath: String? = nil) throws {
        self.executable = executable
        self.host = host
        self.port = port
        self.arguments = ["serve", "--host", host, "--port", "\(port)"] + arguments
        self.logPath = logPath
        try self.start()
    }

    /// The process's id (-1 while it is not running).
    public var pid: Int32 { self.process?.processIdentifier ?? -1 }

    /// Starts the process (again, after ``kill9()`` or ``stop()``) and waits (60 s at most) until
    /// it accepts connections.
    public func start() throws {
        guard FileManager.default.isExecutableFile(atPath: self.executable) else {
            throw ServeProcessError("\(self.executable) is missing: build it first")
        }
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: self.executable)
        process.arguments = self.arguments
        process.environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        var log: FileHandle?
        if let logPath = self.logPath {
            if !FileManager.default.fileExists(atPath: logPath) { _ = FileManager.default.createFile(atPath: logPath, contents: nil) }
            log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
            log?.seekToEndOfFile()
        }
        defer { try? log?.close() }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = log ?? FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = DispatchTime.now().uptimeNanoseconds + 60_000_000_000
        while !acceptsConnections(host: self.host, port: self.port) {
            guard process.isRunning else {
                self.process = nil
                throw ServeProcessError(
                    "canopy serve on \(self.host):\(self.port) exited with \(process.terminationStatus): \(self.logTail)")
            }
            guard DispatchTime.now().uptimeNanoseconds < deadline else {
                self.kill9()
                throw ServeProcessError("canopy serve on \(self.host):\(self.port) did not listen within 60 s: \(self.logTail)")
            }
            usleep(10_000)
        }
    }

    /// The last lines of the log, on one line.
    public var logTail: String {
        guard let logPath = self.logPath, let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return "(no log)" }
        return text.split(separator: "\n").suffix(3).joined(separator: " / ")
    }

    /// SIGKILL, and waits for the process to be gone.
    public func kill9() { self.end(SIGKILL) }

    /// SIGTERM (a graceful stop), and waits for it.
    public func stop() { self.end(SIGTERM) }

    /// SIGSTOP: the process pauses, its sockets open, until ``resume()`` (a long GC pause, a
    /// starved machine).
    public func pause() {
        if let process = self.process, process.isRunning { kill(process.processIdentifier, SIGSTOP) }
    }

    /// SIGCONT after ``pause()``.
    public func resume() {
        if let process = self.process, process.isRunning { kill(process.processIdentifier, SIGCONT) }
    }

    private func end(_ signal: Int32) {
        guard let process = self.process else { return }
        if process.isRunning {
            kill(process.processIdentifier, signal)
            // A paused process takes its signal once it runs again.
            kill(process.processIdentifier, SIGCONT)
        }
        process.waitUntilExit()
        self.process = nil
    }
}

/// Why a ``ServeProcess`` did not start.
public struct ServeProcessError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// Whether a TCP connection to `host:port` (an IPv4 address) is accepted.
public func acceptsConnections(host: String, port: Int) -> Bool {
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
public func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw ServeProcessError("no free port: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}
