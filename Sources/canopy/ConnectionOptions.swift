import ArgumentParser
import CanopyCore

/// Where a data command works: a database directory (`--db`), or a running `canopy serve`
/// (`--url`).
struct ConnectionOptions: ParsableArguments {
    @OptionGroup var database: DatabaseOptions

    @Option(help: ArgumentHelp("Work against a running canopy serve instead (for example http://127.0.0.1:9000, ?ns=NAME for a namespace).", valueName: "URL"))
    var url: String?

    enum Target {
        case local(String)
        case remote(ServerURL)
    }

    func validate() throws {
        if self.url != nil && self.database.path != nil { throw ValidationError("Use either --db or --url, not both.") }
        if let url = self.url {
            do { _ = try ServerURL(parsing: url) } catch { throw ValidationError(error.message) }
        }
    }

    var target: Target {
        get throws(CLIError) {
            if let url = self.url { return .remote(try ServerURL(parsing: url)) }
            return .local(self.database.resolvedPath)
        }
    }

    /// The directory, for commands that only work on one (`info`, `compact`, `repair`).
    func localOnly(_ command: String) throws(CLIError) -> String {
        if self.url != nil { throw .usage("\(command) works on a database directory (--db), not on a server (--url).") }
        return self.database.resolvedPath
    }
}

/// A database path argument, validated by the library's rules.
func parsePath(_ text: String) throws(CLIError) -> DatabasePath {
    do {
        let path = try DatabasePath(validating: text, function: "canopy")
        if path.isInfo { throw CLIError.usage("Invalid path \"\(text)\": .info is not stored data.") }
        return path
    } catch {
        throw .usage("Invalid path \"\(text)\": keys must be non-empty and can't contain \".\", \"#\", \"$\", \"[\" or \"]\".")
    }
}
