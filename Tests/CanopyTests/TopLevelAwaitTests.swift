import CanopyCore
import CanopyTestSupport
import Foundation
import Testing

@testable import Canopy

/// `try await ref.setValue(x)` waits for the write in top-level code too: a child program written
/// as a user's `main.swift` (Tests/AwaitProbe) awaits every write form, checks after each that the
/// write is durable, and kills itself; reopened, the directory holds every write.
@Suite("Top-level await: every awaited write form waits for its write")
struct TopLevelAwaitTests {
    @Test("each awaited write in a main.swift is durable when await returns, and survives SIGKILL")
    func topLevelAwaitWaits() async throws {
        let dir = TemporaryDirectory("canopy-await")
        defer { dir.remove() }
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: builtExecutable("canopy-await-probe"))
        process.arguments = [dir.file("db")]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let watchdog = ProcessWatchdog(process, "the top-level await probe to finish")
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try watchdog.check()
        let steps = [
            "setValue", "setValue(andPriority:)", "setPriority", "updateChildValues", "removeValue", "setValue(from:)",
            "importJSON bytes", "importJSON text", "runTransactionBlock", "runTransaction", "WriteBatch.commit",
            "Database.runTransaction", "getData",
        ]
        #expect(printed.split(separator: "\n").map(String.init) == steps.map { "ok \($0)" })
        #expect(process.terminationStatus == SIGKILL, "the probe ends by SIGKILL once every step passed")

        let db = try Database(path: dir.file("db"))
        defer { db.close() }
        let reopened = try await db.reference(withPath: "probe").getData()
        let expected = try JSONValue(
            parsing: """
                {"set": {".value": "a", ".priority": 7}, "prioritized": {".value": "b", ".priority": 2}, "updated": {"x": 1},
                 "profile": {"age": 36, "name": "ada"}, "imported": {"n": 1}, "importedText": {"n": 2}, "counter": 11,
                 "batch": {"a": "batched", "b": "batched"}, "copy": 11}
                """)
        #expect(reopened.exportJSON == expected)
    }
}
