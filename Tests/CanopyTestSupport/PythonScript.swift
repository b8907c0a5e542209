import Foundation

/// Runs a Python script of the tests (the interop clients) to completion.
public enum PythonScript {
    /// The interpreter `.ci/run` prepares (`CANOPY_INTEROP_PYTHON`, a virtualenv with
    /// firebase-admin and websockets), if set.
    public static var python: String? { ProcessInfo.processInfo.environment["CANOPY_INTEROP_PYTHON"].flatMap { $0.isEmpty ? nil : $0 } }
    /// Whether CI requires the interpreter (`CANOPY_REQUIRE_INTEROP=1`): its absence then fails a
    /// test instead of skipping it.
    public static var required: Bool { ProcessInfo.processInfo.environment["CANOPY_REQUIRE_INTEROP"] == "1" }

    /// Runs `python script arguments` with its output (stdout and stderr) collected; a script
    /// that hangs is terminated after `timeout`. Returns its exit status and output.
    public static func run(
        python: String, script: String, _ arguments: [String], timeout: Duration, environment extra: [String: String] = [:]
    ) async throws -> (status: Int32, output: String) {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script] + arguments
        // No Google credentials are needed in emulator mode: run without the caller's.
        var environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "PYTHONUNBUFFERED": "1"]
        for (key, value) in extra { environment[key] = value }
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        // The blocking read runs on a thread of its own: on the cooperative pool (two threads on
        // two cores) a few concurrent clients would starve an in-process server.
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
        return (status, String(decoding: await reader.value, as: UTF8.self))
    }
}
