import Canopy
import CanopyCluster
import CanopyCore
import CanopyRemote
import CanopyStorage
import CanopyTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A `canopy serve --cluster` process on `127.0.0.N`.
final class ClusterNodeProcess: @unchecked Sendable {  // @unchecked: `process` changes only in the test's own calls, in order
    let host: String
    let port: Int
    let arguments: [String]
    private var process: ChildProcess?

    init(host: String, port: Int, cluster: [String]) throws {
        self.host = host
        self.port = port
        self.arguments = ["serve", "--host", host, "--port", "\(port)", "--advertise", "http://\(host):\(port)"] + cluster
        try self.start()
    }

    /// Starts the process and waits for its first line (it registered and serves).
    func start() throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: builtExecutable("canopy"))
        process.arguments = self.arguments
        process.environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        let stdout = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        let watchdog = ProcessWatchdog(process, "canopy serve --cluster to start", seconds: 60)
        var line = Data()
        while let byte = try stdout.fileHandleForReading.read(upToCount: 1), let b = byte.first, b != 0x0A { line.append(b) }
        try watchdog.check()
        guard String(decoding: line, as: UTF8.self).contains("serving node") else {
            throw DatabaseError(.ioError, "canopy serve on \(self.host) did not start: \(String(decoding: line, as: UTF8.self))")
        }
        // Keeps the pipe from filling up.
        Thread.detachNewThread { _ = stdout.fileHandleForReading.readDataToEndOfFile() }
        self.process = process
    }

    func kill9() {
        guard let process = self.process else { return }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        self.process = nil
    }

    func stop() {
        guard let process = self.process else { return }
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
        self.process = nil
    }

    /// Runs `body` with `count` nodes on 127.0.0.1…`count`, one port, on `configuration`'s
    /// database (the password in a file); stops them afterwards.
    static func withNodes<T>(
        _ count: Int, _ configuration: ClusterConfiguration, _ body: ([ClusterNodeProcess], Int) async throws -> T
    ) async throws -> T {
        let directory = TemporaryDirectory()
        let cluster = try ClusterCommandTests.arguments(configuration, passwordFile: directory.path + "/password")
        let port = try Self.freePort()
        let nodes = try (1...count).map { try ClusterNodeProcess(host: "127.0.0.\($0)", port: port, cluster: cluster) }
        defer { for node in nodes { node.stop() } }
        return try await body(nodes, port)
    }

    /// A free TCP port on the loopback addresses.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw DatabaseError(.ioError, "no free port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// `Database(url:)` against three `canopy serve --cluster` nodes whose leader is SIGKILLed: it
/// follows the redirects to the leader, its awaited writes and transactions all land once, and a
/// listener on another `Database(url:)` ends with exactly the data.
@Suite(.enabled(if: ClusterHarness.runnable, ClusterHarness.skipReason), .timeLimit(.minutes(5)))
struct ClusterRemoteClientTests {
    static func remote(_ url: String) throws -> Database {
        var configuration = Database.Configuration()
        configuration.minimumRetryDelay = .milliseconds(100)
        configuration.maximumRetryDelay = .milliseconds(500)
        return try Database(url: url, configuration: configuration)
    }

    @Test func databaseURLFollowsTheLeaderThroughKillsAndLosesNothing() async throws {
        try await ClusterHarness.withDatabase { configuration in
            try await ClusterNodeProcess.withNodes(3, configuration) { nodes, port in
                let store = try await ClusterStore.connect(configuration, logger: ClusterHarness.logger)

                let writer = try Self.remote("http://127.0.0.1:\(port)?ns=swift")
                let reader = try Self.remote("http://127.0.0.3:\(port)?ns=swift")
                defer {
                    writer.close()
                    reader.close()
                }
                let seen = Mutex<JSONValue?>(nil)
                let handle = reader.reference(withPath: "items").observe(.value) { snapshot in
                    let json = snapshot.exportJSON
                    seen.withLock { $0 = json }
                }
                defer { reader.reference(withPath: "items").removeObserver(withHandle: handle) }
                // Node 3 takes the namespace (the reader's first request): the writer, given node 1,
                // is redirected there.
                _ = try await reader.reference(withPath: "items").getData()
                #expect(try await store.leader(of: "swift")?.advertise == "http://127.0.0.3:\(port)")

                var written = 0
                for round in 0..<4 {
                    for _ in 0..<25 {
                        written += 1
                        _ = try await writer.reference(withPath: "items/k\(written)").setValue(written)
                    }
                    for _ in 0..<3 {
                        _ = try await writer.reference(withPath: "counter").runTransactionBlock { data in
                            data.value = ((data.value as? Int) ?? 0) + 1
                            return .success(withValue: data)
                        }
                    }
                    guard round < 3 else { break }
                    // The leader dies; the client is left on a dead host until it reconnects.
                    let leader = try #require(try await store.leader(of: "swift"))
                    let victim = try #require(nodes.first { leader.advertise == "http://\($0.host):\(port)" })
                    victim.kill9()
                    try victim.start()
                }
                // Every awaited write and transaction is in the log, once.
                let start = try await store.load("swift")
                let items = start.root.child(ChildKey("items"))
                #expect(items.childCount == written)
                #expect(start.root.child(ChildKey("counter")) == .leaf(.int(12)))
                // Three takeovers after the first lead.
                #expect(try await store.leader(of: "swift").map(\.epoch) ?? 0 >= 4)
                // The listener, redirected and reconnected like the writer, ends with exactly the data.
                var expected: [String: JSONValue] = [:]
                for i in 1...written { expected["k\(i)"] = .int(Int64(i)) }
                let deadline = ContinuousClock.now + .seconds(120)
                while seen.withLock({ $0 }) != .object(expected) && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(seen.withLock { $0 } == .object(expected))
                await store.close()
            }
        }
    }
}
