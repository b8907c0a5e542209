import ArgumentParser
import Canopy
import CanopyCore
import Foundation

/// `canopy info`: what a database directory holds.
struct Info: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a database's size, node count and journal/checkpoint state.",
        discussion: """
            Examples:
              canopy info
              canopy info --db ./data --json
            """
    )

    @Flag(help: "Print the information as one JSON object.")
    var json = false

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let directory = try self.connection.localOnly("info")
        let db = try LocalDatabase.open(directory, create: false)
        defer { db.close() }
        let status: StorageStatus
        do {
            guard let s = try await db.storageStatus() else { throw CLIError.failure("No storage status for \(directory).") }
            status = s
        } catch {
            throw CLIError.from(error)
        }
        let files = Self.files(in: directory)
        let fields: [(String, JSONValue)] = [
            ("path", .string(directory)),
            ("bytes", .int(Int64(files.reduce(0) { $0 + $1.1 }))),
            ("nodes", .int(Int64(status.nodeCount))),
            ("leaves", .int(Int64(status.leafCount))),
            ("lastWrite", .int(Int64(status.lastSequence))),
            ("checkpointWrite", .int(Int64(status.checkpointSequence))),
            ("checkpointBytes", .int(Int64(status.checkpointBytes))),
            ("journalBytes", .int(Int64(status.journalBytes))),
            ("checkpointThreshold", .int(Int64(status.checkpointThreshold))),
            ("replayedAtOpen", .int(Int64(status.replayedAtOpen))),
            ("recoveryNotes", .array(status.recoveryNotes.map { .string($0) })),
            ("files", .object(Dictionary(uniqueKeysWithValues: files.map { ($0.0, JSONValue.int(Int64($0.1))) }))),
        ]
        if self.json {
            var object: [String: JSONValue] = [:]
            for (name, value) in fields { object[name] = value }
            Output.line(JSONWriter.string(.object(object), options: [.sortedKeys]))
            return
        }
        Output.line("database     \(directory)")
        Output.line("size         \(Progress.size(files.reduce(0) { $0 + $1.1 })) in \(files.count) files")
        Output.line("nodes        \(status.nodeCount) (\(status.leafCount) leaves)")
        Output.line("last write   #\(status.lastSequence)")
        Output.line(
            "checkpoint   "
                + (status.checkpointSequence == 0
                    ? "none yet" : "covers #\(status.checkpointSequence), \(Progress.size(status.checkpointBytes))"))
        Output.line(
            "journal      \(Progress.size(status.journalBytes)) after the checkpoint (next checkpoint past \(Progress.size(status.checkpointThreshold)))"
        )
        Output.line("opening      replayed \(status.replayedAtOpen) journal records")
        for note in status.recoveryNotes { Output.line("recovery     \(note)") }
        if let failure = status.failure { Output.line("failure      \(failure)") }
    }

    /// The regular files of `directory` and their sizes, by name.
    static func files(in directory: String) -> [(String, Int)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.sorted().compactMap { name in
            guard let size = (try? FileManager.default.attributesOfItem(atPath: directory + "/" + name))?[.size] as? Int else { return nil }
            return (name, size)
        }
    }
}

/// `canopy compact`: writes a checkpoint now.
struct Compact: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a checkpoint now and retire the journal it covers.",
        discussion: """
            Opening then loads the checkpoint instead of replaying the journal. Checkpoints are \
            also written automatically as the journal grows.

            Example:
              canopy compact --db ./data
            """
    )

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let directory = try self.connection.localOnly("compact")
        let db = try LocalDatabase.open(directory, create: false)
        defer { db.close() }
        do {
            let before = try await db.storageStatus()
            try await db.checkpoint()
            guard let after = try await db.storageStatus() else { return }
            Output.line(
                "checkpoint covers #\(after.checkpointSequence) (\(Progress.size(after.checkpointBytes))); journal \(Progress.size(before?.journalBytes ?? 0)) -> \(Progress.size(after.journalBytes))"
            )
        } catch {
            throw CLIError.from(error)
        }
    }
}
