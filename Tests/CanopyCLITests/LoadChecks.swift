import CanopyTestSupport
import Foundation
import Testing

/// Expectations checked on a plain thread, recorded as test issues afterwards (on the test's
/// task, where Swift Testing attributes them).
final class Checks: Sendable {
    private let failures = Locked<[(String, SourceLocation)]>([])

    func expect(
        _ condition: Bool, _ comment: @autoclosure () -> String = "",
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) {
        guard !condition else { return }
        let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        let message = comment()
        self.failures.withLock { $0.append((message.isEmpty ? "Expectation failed" : "Expectation failed: \(message)", location)) }
    }

    var recorded: [(String, SourceLocation)] { self.failures.withLock { $0 } }
}

/// Runs a blocking load scenario on its own thread, so that it does not hold one of the few
/// threads of Swift's cooperative pool (two on this machine) for many seconds while tests of
/// in-process servers need them; then records its failed checks and rethrows its error.
func runOffThePool(_ scenario: @escaping @Sendable (Checks) throws -> Void) async throws {
    let checks = Checks()
    let result: Result<Void, any Error> = await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: Result { try scenario(checks) }) }
        thread.stackSize = 8 << 20
        thread.start()
    }
    for (message, location) in checks.recorded { Issue.record(Comment(rawValue: message), sourceLocation: location) }
    try result.get()
}
