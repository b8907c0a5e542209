import ArgumentParser
import Canopy
import CanopyCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `canopy import PATH FILE`: replaces a location with a JSON file's contents.
struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replace the data at a path with the contents of a JSON file.",
        discussion: """
            Reads export format (with priorities) as well as plain JSON; large files are parsed \
            quickly (about 100 MB/s). Shows progress on a terminal. Nothing is written when the \
            file is not valid JSON or not valid data.

            Examples:
              canopy import / backup.json
              canopy import users users.json --db ./data
              curl -s https://example.com/dump.json | canopy import imported -
            """
    )

    @Argument(help: "The location to replace, for example / or users.")
    var path: String

    @Argument(help: "The JSON file (- for stdin).")
    var file: String

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let path = try parsePath(self.path)
        let started = ContinuousClock.now
        let progress = Progress(enabled: Output.stderrIsTerminal)
        let bytes = try self.file == "-" ? readInput("-") : Self.read(self.file, progress: progress)
        progress.phase("validating \(Progress.size(bytes.count))")
        let write = try LocalDatabase.setOperation(bytes, at: path, function: "import")
        switch try self.connection.target {
        case .local(let directory):
            let db = try LocalDatabase.open(directory, create: true)
            defer { db.close() }
            progress.phase("writing \(Progress.size(bytes.count))")
            try await LocalDatabase.apply(write, to: db)
        case .remote(let server):
            progress.phase("sending \(Progress.size(bytes.count))")
            try await Remote.put(server, path: path, body: bytes)
        }
        progress.done("imported \(Progress.size(bytes.count)) into \(path.string) in \(Progress.seconds(ContinuousClock.now - started))")
    }

    /// The file's bytes, read in chunks with a progress bar.
    static func read(_ file: String, progress: Progress) throws(CLIError) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: file) else { return try readInput(file) }
        defer { try? handle.close() }
        let total = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
        var bytes: [UInt8] = []
        bytes.reserveCapacity(total)
        while true {
            let chunk: Data
            do {
                guard let next = try handle.read(upToCount: 4 << 20) else { break }
                chunk = next
            } catch {
                throw .failure("Cannot read \(file): \(error.localizedDescription)")
            }
            if chunk.isEmpty { break }
            bytes += chunk
            progress.bar("reading", done: bytes.count, total: total)
        }
        return bytes
    }
}

/// A progress bar on stderr (only on a terminal, only for large inputs).
final class Progress: Sendable {
    let enabled: Bool

    init(enabled: Bool) { self.enabled = enabled }

    func bar(_ label: String, done: Int, total: Int) {
        guard self.enabled, total > 8 << 20 else { return }
        let width = 30
        let filled = total > 0 ? min(width, done * width / total) : 0
        let percent = total > 0 ? done * 100 / total : 0
        Output.status(
            "\r\(label) [\(String(repeating: "#", count: filled))\(String(repeating: " ", count: width - filled))] \(percent)% \(Self.size(done))/\(Self.size(total))\u{1B}[K"
        )
    }

    func phase(_ text: String) {
        guard self.enabled else { return }
        Output.status("\r\(text)…\u{1B}[K")
    }

    func done(_ text: String) {
        guard self.enabled else { return }
        Output.status("\r\(text)\u{1B}[K\n")
    }

    static func size(_ bytes: Int) -> String {
        if bytes < 1 << 10 { return "\(bytes) B" }
        if bytes < 1 << 20 { return String(format: "%.1f KB", Double(bytes) / 1024) }
        if bytes < 1 << 30 { return String(format: "%.1f MB", Double(bytes) / 1_048_576) }
        return String(format: "%.2f GB", Double(bytes) / 1_073_741_824)
    }

    static func seconds(_ duration: Duration) -> String {
        let (s, attoseconds) = duration.components
        return String(format: "%.2f s", Double(s) + Double(attoseconds) / 1e18)
    }
}

/// `canopy export [PATH]`: prints (or saves) the data in export format.
struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the data at a path as JSON in export format (with priorities), for canopy import.",
        discussion: """
            Examples:
              canopy export > backup.json
              canopy export users --output users.json --pretty
              canopy export --url http://127.0.0.1:9000 > backup.json
            """
    )

    @Argument(help: "The location (the root by default).")
    var path: String = "/"

    @Option(
        name: [.customShort("o"), .customLong("output")], help: ArgumentHelp("Write to this file instead of stdout.", valueName: "FILE"))
    var output: String?

    @Flag(help: "Indent the JSON.")
    var pretty = false

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let path = try parsePath(self.path)
        let format = ReadFormat(pretty: self.pretty, export: true)
        let text: String
        switch try self.connection.target {
        case .local(let directory):
            let db = try LocalDatabase.open(directory, create: false)
            defer { db.close() }
            text = try await Reader.read(db, path: path, query: nil, format: format)
        case .remote(let server):
            text = try await Remote.get(server, path: path, query: nil, format: format)
        }
        if let output = self.output {
            do {
                try Data((text + "\n").utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
            } catch {
                throw CLIError.failure("Cannot write \(output): \(error.localizedDescription)")
            }
        } else {
            Output.line(text)
        }
    }
}
