import CanopyServer
import Foundation
import Testing

/// The real firebase-admin (Python, from PyPI) against the server over loopback.
///
/// `.ci/run` installs firebase-admin into a virtualenv and sets `CANOPY_INTEROP_PYTHON` to its
/// interpreter and `CANOPY_REQUIRE_INTEROP=1`, so that in CI the test fails (rather than being
/// skipped) when the interop cannot run.
@Suite("firebase-admin interop")
struct InteropTests {
    static var python: String? { ProcessInfo.processInfo.environment["CANOPY_INTEROP_PYTHON"].flatMap { $0.isEmpty ? nil : $0 } }
    static var required: Bool { ProcessInfo.processInfo.environment["CANOPY_REQUIRE_INTEROP"] == "1" }

    /// Whether the test runs: when the client is there, or when CI requires it (then a missing
    /// client fails the test instead of skipping it).
    static var runnable: Bool { Self.python != nil || Self.required }

    @Test(
        "firebase-admin: get/set/update/push/delete, queries, shallow, ETags, concurrent transactions, listen()",
        .enabled(if: InteropTests.runnable, "set CANOPY_INTEROP_PYTHON to a Python with firebase-admin (CANOPY_REQUIRE_INTEROP=1 makes its absence a failure)")
    )
    func firebaseAdmin() async throws {
        guard let python = Self.python else {
            Issue.record("CANOPY_REQUIRE_INTEROP=1 but CANOPY_INTEROP_PYTHON is not set")
            return
        }
        guard FileManager.default.isExecutableFile(atPath: python) else {
            Issue.record("CANOPY_INTEROP_PYTHON=\(python) is not an executable")
            return
        }
        guard let script = Bundle.module.path(forResource: "firebase_admin_interop", ofType: "py", inDirectory: "Interop") else {
            Issue.record("the interop script is not among the test resources")
            return
        }
        // A short keep-alive: firebase-admin's ListenerRegistration.close() returns on the next one.
        let server = makeServer { $0.keepAliveInterval = .seconds(1) }
        try await withLiveServer(server) { port in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: python)
            process.arguments = [script, "http://127.0.0.1:\(port)?ns=interop"]
            // No Google credentials are needed in emulator mode: run without the caller's.
            process.environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "PYTHONUNBUFFERED": "1"]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            let reader = Task.detached { output.fileHandleForReading.readDataToEndOfFile() }
            // A failure guard: a hung client is killed (and the test fails) after 5 minutes.
            let guardTask = Task {
                try await Task.sleep(for: .seconds(300))
                process.terminate()
            }
            defer { guardTask.cancel() }
            let status: Int32 = try await withCheckedThrowingContinuation { continuation in
                process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
                do { try process.run() } catch { continuation.resume(throwing: error) }
            }
            let text = String(decoding: await reader.value, as: UTF8.self)
            #expect(status == 0, "firebase-admin interop failed:\n\(text)")
            #expect(text.contains("interop: all checks passed"), "\(text)")
        }
    }
}
