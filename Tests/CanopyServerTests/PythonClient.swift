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
    static var python: String? { PythonScript.python }
    static var required: Bool { PythonScript.required }

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
        let (status, text) = try await PythonScript.run(python: python, script: path, arguments, timeout: timeout)
        #expect(status == 0, "\(script) \(arguments.joined(separator: " ")) failed:\n\(text)")
        #expect(text.contains(marker), "\(text)")
    }
}
