import CanopyTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A `canopy serve` child process on a data directory, bound to a free loopback port.
final class ServeProcess: Sendable {
    let process: ChildProcess
    let port: Int

    /// Starts `canopy serve --db directory --port 0` and waits for the line naming its URL.
    init(directory: String) throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: builtExecutable("canopy"))
        process.arguments = ["serve", "--db", directory, "--port", "0"]
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "CANOPY_DB")
        process.environment = environment
        let stdout = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        let firstLine = Locked<String?>(nil)
        let started = DispatchSemaphore(value: 0)
        try process.run()
        let watchdog = ProcessWatchdog(process, "canopy serve to print its URL", seconds: 30)
        Thread {
            let output = stdout.fileHandleForReading
            var line = Data()
            while let byte = try? output.read(upToCount: 1), let first = byte.first, first != 0x0A { line.append(first) }
            firstLine.withLock { $0 = String(decoding: line, as: UTF8.self) }
            started.signal()
            _ = output.readDataToEndOfFile()  // keeps the pipe from filling up
        }.start()
        try started.wait(for: "canopy serve to print its URL", seconds: 30)
        try watchdog.check()
        let line = firstLine.value ?? ""
        guard let colon = line.lastIndex(of: ":"), let port = Int(line[line.index(after: colon)...].prefix { $0.isNumber }) else {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            throw FaultTestError("unexpected canopy serve output: \(line)")
        }
        self.process = process
        self.port = port
    }

    /// Kills the server at once (SIGKILL) and waits for it to be gone.
    func kill9() {
        if self.process.isRunning { kill(self.process.processIdentifier, SIGKILL) }
        self.process.waitUntilExit()
    }

    /// Stops the server gracefully (SIGTERM); kills it when it does not stop in time.
    func stop() {
        guard self.process.isRunning else { return }
        let watchdog = ProcessWatchdog(self.process, "canopy serve to stop", seconds: 20)
        kill(self.process.processIdentifier, SIGTERM)
        self.process.waitUntilExit()
        _ = try? watchdog.check()
    }
}
