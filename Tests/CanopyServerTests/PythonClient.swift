import CanopyTestSupport
import Foundation
import Testing

/// Runs one of the Python clients in `Interop/` (firebase-admin, the WebSocket protocol client)
/// with the interpreter `.ci/run` prepares.
///
/// `.ci/run` installs the clients' packages into a virtualenv and sets `CANOPY_INTEROP_PYTHON` to
/// its interpreter and `CANOPY_REQUIRE_INTEROP=1`, so that in CI a test fails (rather than being
/// skipped) when its client cannot run.
enum PythonClient {
    static var python: String? { ProcessInfo.processInfo.environment["CANOPY_INTEROP_PYTHON"].flatMap { $0.isEmpty ? nil : $0 } }
    static var required: Bool { ProcessInfo.processInfo.environment["CANOPY_REQUIRE_INTEROP"] == "1" }

    /// Whether such a test runs: when the interpreter is there, or when CI requires it (then a
    /// missing interpreter fails the test instead of skipping it).
    static var runnable: Bool { Self.python != nil || Self.required }

    static let skipReason: Comment =
        "set CANOPY_INTEROP_PYTHON to a Python with firebase-admin and websockets (CANOPY_REQUIRE_INTEROP=1 makes its absence a failure)"

    /// Runs `Interop/SCRIPT.py ARGUMENTS` and expects exit status 0 and `marker` in its output; a
    /// client that hangs is killed after `timeout` and the test fails.
    static func run(_ script: String, _ arguments: [String], expecting marker: String, timeout: Duration = .seconds(300)) async throws {
        guard let python = Self.python else {
            Issue.record("CANOPY_REQUIRE_INTEROP=1 but CANOPY_INTEROP_PYTHON is not set")
            return
        }
        guard FileManager.default.isExecutableFile(atPath: python) else {
            Issue.record("CANOPY_INTEROP_PYTHON=\(python) is not an executable")
            return
        }
        guard let path = Bundle.module.path(forResource: script, ofType: "py", inDirectory: "Interop") else {
            Issue.record("Interop/\(script).py is not among the test resources")
            return
        }
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [path] + arguments
        // No Google credentials are needed in emulator mode: run without the caller's.
        process.environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "PYTHONUNBUFFERED": "1"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        // The blocking read runs on a thread of its own: on the cooperative pool (two threads on
        // two cores) a few concurrent clients would starve the in-process server.
        let reader = Task {
            await withCheckedContinuation { continuation in
                Thread.detachNewThread { continuation.resume(returning: output.fileHandleForReading.readDataToEndOfFile()) }
            }
        }
        let guardTask = Task {
            try await Task.sleep(for: timeout)
            process.terminate()
        }
        defer { guardTask.cancel() }
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        let text = String(decoding: await reader.value, as: UTF8.self)
        #expect(status == 0, "\(script) \(arguments.joined(separator: " ")) failed:\n\(text)")
        #expect(text.contains(marker), "\(text)")
    }
}
