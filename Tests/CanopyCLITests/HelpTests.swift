import Canopy
import Foundation
import Testing

/// `--help` of every command, kept in Snapshots/ (CANOPY_RECORD_SNAPSHOTS=1 re-records them).
@Suite(.serialized)
struct HelpTests {
    static let commands = [
        "", "get", "set", "update", "push", "remove", "observe", "import", "export", "info", "compact", "repair", "rules", "backup",
        "restore",
    ]

    static let snapshots = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Snapshots")

    @Test(arguments: commands)
    func help(_ command: String) throws {
        let r = try canopy((command.isEmpty ? [] : [command]) + ["--help"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("Example"), "\(r)")
        let file = Self.snapshots.appendingPathComponent("\(command.isEmpty ? "canopy" : command).txt")
        if ProcessInfo.processInfo.environment["CANOPY_RECORD_SNAPSHOTS"] == "1" {
            try FileManager.default.createDirectory(at: Self.snapshots, withIntermediateDirectories: true)
            try Data(r.stdout.utf8).write(to: file)
            return
        }
        let expected = try String(contentsOf: file, encoding: .utf8)
        #expect(r.stdout == expected, "help of '\(command)' differs from \(file.path); re-record with CANOPY_RECORD_SNAPSHOTS=1")
    }

    @Test("--version prints the package's one version constant")
    func version() throws {
        let r = try canopy(["--version"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == CanopyVersion.current + "\n", "\(r)")
        #expect(
            CanopyVersion.current.split(separator: ".").count == 3
                && CanopyVersion.current.split(separator: ".").allSatisfy { Int($0) != nil })
    }

    @Test func serveHelpHasAnExample() throws {
        let r = try canopy(["serve", "--help"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("Example"))
    }
}
