import CanopyTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The built `canopy` executable, next to the test bundle.
let canopyPath = builtExecutable("canopy")

/// What a finished run printed.
struct RunResult: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
    /// stdout without the final newline.
    var output: String { stdout.hasSuffix("\n") ? String(stdout.dropLast()) : stdout }
}

/// The environment the tool runs in: no $CANOPY_DB from the caller, a fixed width for help.
func toolEnvironment(_ extra: [String: String] = [:]) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment.removeValue(forKey: "CANOPY_DB")
    environment["COLUMNS"] = "100"
    for (key, value) in extra { environment[key] = value }
    return environment
}

/// Runs `canopy` with `arguments` to completion (stdin from `input`, or empty).
func canopy(_ arguments: [String], input: String? = nil, environment: [String: String] = [:], directory: String? = nil) throws -> RunResult
{
    let run = try runToExit(
        canopyPath, arguments, waitingFor: "canopy \(arguments.joined(separator: " ")) to exit", input: input,
        environment: toolEnvironment(environment), directory: directory)
    return RunResult(status: run.status, stdout: run.stdout, stderr: run.stderr)
}

/// Runs `canopy` with `arguments` (a write, say) and expects it to succeed.
func canopySucceeds(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
    let r = try canopy(arguments)
    #expect(r.status == 0, "\(arguments): \(r)", sourceLocation: sourceLocation)
}

/// A `canopy` process left running (serve, observe), whose stdout lines are collected.
final class RunningTool: Sendable {
    let process: ChildProcess
    private let lines = Locked<[String]>([])
    private let errors = Locked<String>("")

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: canopyPath)
        process.arguments = arguments
        process.environment = toolEnvironment(environment)
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = stdout
        process.standardError = stderr
        self.process = process
        let lines = self.lines
        let errors = self.errors
        Thread {
            var pending = Data()
            while true {
                let chunk = stdout.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                pending += chunk
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending = Data(pending[(newline + 1)...])
                    lines.withLock { $0.append(line) }
                }
            }
        }.start()
        Thread {
            let data = stderr.fileHandleForReading.readDataToEndOfFile()
            errors.withLock { $0 = String(decoding: data, as: UTF8.self) }
        }.start()
        try process.run()
    }

    var output: [String] { self.lines.withLock { $0 } }
    var errorOutput: String { self.errors.withLock { $0 } }

    /// Waits (at most `seconds`) until `count` lines were printed; returns them.
    @discardableResult
    func waitForLines(_ count: Int, seconds: Double = 20) throws -> [String] {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let current = self.output
            if current.count >= count { return current }
            if !self.process.isRunning && self.output.count < count {
                usleep(50_000)
                if self.output.count >= count { return self.output }
                throw ToolFailure(
                    "canopy exited (\(self.process.terminationStatus)) after \(self.output.count) of \(count) lines: \(self.output) \(self.errorOutput)"
                )
            }
            usleep(5_000)
        }
        throw ToolFailure("timed out waiting for \(count) lines; got \(self.output); stderr: \(self.errorOutput)")
    }

    /// Sends `signal` and waits for the exit status.
    func stop(_ signal: Int32 = SIGINT, seconds: Double = 20) throws -> Int32 {
        if self.process.isRunning { kill(self.process.processIdentifier, signal) }
        let deadline = Date().addingTimeInterval(seconds)
        while self.process.isRunning && Date() < deadline { usleep(5_000) }
        if self.process.isRunning {
            kill(self.process.processIdentifier, SIGKILL)
            self.process.waitUntilExit()
            throw ToolFailure("canopy did not stop on signal \(signal)")
        }
        return self.process.terminationStatus
    }

    deinit {
        if self.process.isRunning { kill(self.process.processIdentifier, SIGKILL) }
    }
}

struct ToolFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Starts `canopy serve` for `directory` on a free port; returns it and its URL.
func startServer(_ directory: String) throws -> (RunningTool, String) {
    let server = try RunningTool(["serve", "--db", directory, "--port", "0"])
    let line = try server.waitForLines(1)[0]
    guard let range = line.range(of: "http://") else { throw ToolFailure("unexpected serve output: \(line)") }
    return (server, String(line[range.lowerBound...]))
}
