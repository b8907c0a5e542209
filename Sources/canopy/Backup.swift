import ArgumentParser
import Canopy
import CanopyConnection
import CanopyCore
import Foundation
import NIOHTTP1

/// `canopy backup DIR --url URL`: an online backup of a running server's namespaces.
struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Back up a running server's namespaces (data and rules) into a directory, for canopy restore.",
        discussion: """
            The server keeps serving. Each namespace is read in one request \
            (GET /.json?format=export), which the server answers from a single moment of that \
            namespace: its file is a consistent snapshot, with priorities. Namespaces are read one \
            after another, each consistent on its own. Without --namespace, every namespace the \
            server lists (/.inspect/databases.json) is saved. The directory gets NAME.json, \
            NAME.rules.json and manifest.json; it must be new or empty. On a guarded server give \
            the admin token.

            Examples:
              canopy backup backups/2026-11-28 --url http://127.0.0.1:9000 --auth-token "$TOKEN"
              canopy backup blog-backup --url http://127.0.0.1:9000 --namespace blog
            """
    )

    @Argument(help: ArgumentHelp("The directory to write (new or empty).", valueName: "directory"))
    var directory: String

    @OptionGroup var server: ServerOptions

    func run() async throws {
        let created = try Self.prepare(self.directory)
        do {
            try await self.save()
        } catch {
            // A failed backup leaves no partial directory behind (one it did not create is left as it was, empty).
            if created { try? FileManager.default.removeItem(atPath: self.directory) }
            throw error
        }
    }

    private func save() async throws {
        let server = try self.server.server
        let names: [String]
        if let namespace = self.server.namespace {
            names = [namespace]
        } else {
            names = try await Self.namespaces(server, headers: self.server.headers)
        }
        var total = 0
        for name in names {
            let one = server.namespaced(name)
            let data = try await ServerClient.send(
                one, .GET, one.target(resource: "/.json", [("format", "export")]), headers: self.server.headers)
            let rules = try await ServerClient.send(one, .GET, one.target(resource: "/.settings/rules.json"), headers: self.server.headers)
            try Self.write(data.body + [0x0A], to: self.directory + "/\(name).json")
            try Self.write(rules.body, to: self.directory + "/\(name).rules.json")
            total += data.body.count
        }
        let manifest = BackupManifest(
            version: CanopyVersion.current, created: ISO8601DateFormatter().string(from: Date()), server: self.server.url, namespaces: names
        )
        // The manifest last: a directory without one is not a backup (restore refuses it).
        try Self.write(
            Array(JSONWriter.string(manifest.json, options: [.pretty, .sortedKeys]).utf8) + [0x0A],
            to: self.directory + "/" + BackupManifest.fileName)
        Output.line("backed up \(names.count) namespace\(names.count == 1 ? "" : "s") (\(Progress.size(total))) into \(self.directory)")
    }

    /// Creates `directory` (returns `true`), or checks that it is empty (returns `false`).
    static func prepare(_ directory: String) throws(CLIError) -> Bool {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw .usage("\(directory) is a file; give a new or empty directory.") }
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            guard entries.isEmpty else { throw .usage("\(directory) is not empty; give a new or empty directory.") }
            return false
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .failure("Cannot create \(directory): \(error.localizedDescription)")
        }
        return true
    }

    /// The names the server lists at `/.inspect/databases.json`.
    static func namespaces(_ server: ServerURL, headers: [(String, String)]) async throws(CLIError) -> [String] {
        var listing = server
        listing.parameters.removeAll { $0.0 == "ns" }
        let response = try await ServerClient.send(listing, .GET, listing.target(resource: "/.inspect/databases.json"), headers: headers)
        guard case .array(let entries) = try parseJSON(response.body) else {
            throw .failure("The server's namespace list is not a JSON array.")
        }
        var names: [String] = []
        for entry in entries {
            guard case .string(let name)? = entry["name"] else {
                throw .failure("The server's namespace list has an entry without a name.")
            }
            names.append(name)
        }
        return names
    }

    /// Writes `bytes` to `path` durably (a temporary file, fsync, rename).
    static func write(_ bytes: [UInt8], to path: String) throws(CLIError) {
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
            let fd = open(path, O_RDONLY)
            if fd >= 0 {
                fsync(fd)
                close(fd)
            }
        } catch {
            throw .failure("Cannot write \(path): \(error.localizedDescription)")
        }
    }
}
