import ArgumentParser
import Canopy

/// `canopy`: the command-line tool of Canopy.
@main
struct CanopyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "canopy",
        abstract: "Canopy, a realtime JSON-tree database: serve it over HTTP, or work with its data.",
        discussion: """
            Example:
              canopy serve --db ./canopy-data --port 9000
              curl 'http://127.0.0.1:9000/users/ada.json' -X PUT -d '{"name": "Ada"}'
            """,
        version: CanopyVersion.current,
        subcommands: [
            Get.self, SetCommand.self, Update.self, Push.self, Remove.self, Observe.self, Import.self, Export.self, Serve.self, Info.self,
            Compact.self, Repair.self, Rules.self, Backup.self, Restore.self, ClusterCommand.self,
        ]
    )
}
