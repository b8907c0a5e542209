import CanopyTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A `canopy serve` child process for load tests: its port and pid, for /proc readings.
struct LoadServer {
    let tool: RunningTool
    let port: Int
    var pid: Int32 { self.tool.process.processIdentifier }

    /// Starts `canopy serve --db directory --port 0 extra…` and waits for its startup line.
    init(directory: String, _ extra: [String] = []) throws {
        raiseOpenFileLimit()  // inherited by the server
        let tool = try RunningTool(["serve", "--db", directory, "--port", "0"] + extra)
        let line = try tool.waitForLines(1)[0]
        guard let colon = line.lastIndex(of: ":"), let port = Int(line[line.index(after: colon)...]) else {
            _ = try? tool.stop(SIGKILL)
            throw ToolFailure("unexpected serve output: \(line)")
        }
        self.tool = tool
        self.port = port
    }

    var residentBytes: Int { ProcessStats.residentBytes(self.pid) }
    var openFiles: Int { ProcessStats.openFiles(self.pid) }

    /// Stops it (SIGTERM, then SIGKILL); for `defer`.
    func stop() { _ = try? self.tool.stop(SIGTERM, seconds: 10) }

    /// Kills it at once and waits for it to be gone.
    func kill() {
        if self.tool.process.isRunning { Glibc.kill(self.pid, SIGKILL) }
        self.tool.process.waitUntilExit()
    }
}

/// A thread that GETs `path` every `interval` seconds on its own connection while load runs,
/// and keeps the worst latency and any failure.
final class LatencyProbe: Sendable {
    private let state = Locked<(worst: Double, count: Int, failures: [String], stop: Bool, done: Bool)>((0, 0, [], false, false))

    init(port: Int, path: String = "/probe.json", interval: Double = 0.05) {
        let state = self.state
        Thread {
            let client = RawHTTPClient(port: port, timeout: 60)
            while !state.withLock({ $0.stop }) {
                let start = Date()
                do {
                    let response = try client.request("GET", path)
                    let elapsed = Date().timeIntervalSince(start)
                    state.withLock {
                        $0.worst = max($0.worst, elapsed)
                        $0.count += 1
                        if response.status != 200 { $0.failures.append("status \(response.status)") }
                    }
                } catch {
                    let elapsed = Date().timeIntervalSince(start)
                    state.withLock {
                        $0.worst = max($0.worst, elapsed)
                        $0.failures.append("\(error)")
                    }
                }
                usleep(UInt32(interval * 1_000_000))
            }
            client.close()
            state.withLock { $0.done = true }
        }.start()
    }

    /// The number of answers so far.
    var answers: Int { self.state.withLock { $0.count } }

    /// Stops the probe; returns the worst latency in seconds, the number of answers, and the
    /// failures.
    func stop() -> (worst: Double, count: Int, failures: [String]) {
        self.state.withLock { $0.stop = true }
        _ = waitFor(seconds: 90) { self.state.withLock { $0.done } }
        return self.state.withLock { ($0.worst, $0.count, $0.failures) }
    }
}
