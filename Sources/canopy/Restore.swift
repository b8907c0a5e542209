import ArgumentParser
import Canopy
import CanopyConnection
import CanopyCore
import Foundation
import NIOHTTP1

/// `canopy restore DIR --url URL`: puts a backup's namespaces back on a running server.
struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Restore a backup made by canopy backup onto a running server: each namespace's data and rules.",
        discussion: """
            Each namespace's data replaces the whole namespace in one write (PUT /.json), then its \
            rules replace the namespace's rules. Every file is checked before anything is sent: \
            a backup with a missing or invalid file changes nothing. Listeners see the restored \
            data as one change. Without --namespace, every namespace of the backup is restored. \
            To restore into a data directory, start canopy serve on it and restore into that.

            Examples:
              canopy restore backups/2026-11-28 --url http://127.0.0.1:9000 --auth-token "$TOKEN"
              canopy restore blog-backup --url http://127.0.0.1:9000 --namespace blog
            """
    )

    @Argument(help: ArgumentHelp("A directory written by canopy backup.", valueName: "directory"))
    var directory: String

    @OptionGroup var server: ServerOptions

    func run() async throws {
        let manifest = try BackupManifest(directory: self.directory)
        var names = manifest.namespaces
        if let namespace = self.server.namespace {
            guard names.contains(namespace) else {
                throw CLIError.usage(
                    "The backup in \(self.directory) has no namespace \(namespace) (it has \(names.joined(separator: ", "))).")
            }
            names = [namespace]
        }
        // Read and check every file first: nothing is sent unless all of them are valid.
        var files: [(name: String, data: [UInt8], rules: RulesFile)] = []
        for name in names {
            let dataPath = self.directory + "/\(name).json"
            guard let data = FileManager.default.contents(atPath: dataPath) else {
                throw CLIError.usage("The backup is incomplete: \(dataPath) is missing.")
            }
            let bytes = Array(data)
            _ = try LocalDatabase.setOperation(bytes, at: .root, function: "restore")
            files.append((name, bytes, try RulesFile(self.directory + "/\(name).rules.json")))
        }
        let server = try self.server.server
        var total = 0
        for file in files {
            let one = server.namespaced(file.name)
            _ = try await ServerClient.send(
                one, .PUT, one.target(resource: "/.json", [("print", "silent")]), body: file.data, headers: self.server.headers)
            _ = try await ServerClient.send(
                one, .PUT, one.target(resource: "/.settings/rules.json", [("print", "silent")]), body: file.rules.bytes,
                headers: self.server.headers)
            total += file.data.count
        }
        Output.line("restored \(files.count) namespace\(files.count == 1 ? "" : "s") (\(Progress.size(total))) from \(self.directory)")
    }
}
