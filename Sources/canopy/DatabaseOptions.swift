import ArgumentParser
import Foundation

/// Options every command shares: where the data lives.
struct DatabaseOptions: ParsableArguments {
    @Option(
        name: .customLong("db"),
        help: ArgumentHelp("The data directory (default: $CANOPY_DB, else ./canopy-data).", valueName: "PATH")
    )
    var path: String?

    /// The directory to use: `--db`, else `$CANOPY_DB`, else `./canopy-data`.
    var resolvedPath: String {
        if let path { return path }
        if let env = ProcessInfo.processInfo.environment["CANOPY_DB"], !env.isEmpty { return env }
        return "./canopy-data"
    }
}
