import ArgumentParser
import CanopyCore
import Foundation

/// Where a data command works: a database directory (`--db`), or a running `canopy serve`
/// (`--url`).
struct ConnectionOptions: ParsableArguments {
    @OptionGroup var database: DatabaseOptions

    @Option(help: ArgumentHelp("Work against a running canopy serve instead (for example http://127.0.0.1:9000).", valueName: "URL"))
    var url: String?

    @Option(
        name: .customLong("namespace"),
        help: ArgumentHelp(
            "The database in the data directory (or on the server), as canopy serve names them (default: default).", valueName: "NAME"))
    var namespace: String?

    enum Target {
        case local(String)
        case remote(ServerURL)
    }

    func validate() throws {
        if self.url != nil && self.database.path != nil { throw ValidationError("Use either --db or --url, not both.") }
        if let url = self.url { try Self.validate(url: url) }
        try Self.validate(namespace: self.namespace)
    }

    static func isNamespaceByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D || b == 0x5F
    }

    /// Checks a `--url` value as ``ServerURL`` reads it (for `validate()`).
    static func validate(url: String) throws {
        do { _ = try ServerURL(parsing: url) } catch { throw ValidationError(error.message) }
    }

    /// Checks a `--namespace` value, if given: letters, digits, `-` and `_` (for `validate()`).
    static func validate(namespace: String?) throws {
        if let namespace, namespace.isEmpty || !namespace.utf8.allSatisfy(Self.isNamespaceByte) {
            throw ValidationError("--namespace \(namespace): use letters, digits, - and _.")
        }
    }

    /// The server at `url`, with `namespace` (if given) as its `ns` parameter.
    static func server(_ url: String, namespace: String?) throws(CLIError) -> ServerURL {
        let server = try ServerURL(parsing: url)
        return namespace.map { server.namespaced($0) } ?? server
    }

    var target: Target {
        get throws(CLIError) {
            if let url = self.url { return .remote(try Self.server(url, namespace: self.namespace)) }
            return .local(Self.databaseDirectory(self.database.resolvedPath, namespace: self.namespace))
        }
    }

    /// The directory, for commands that only work on one (`info`, `compact`, `repair`).
    func localOnly(_ command: String) throws(CLIError) -> String {
        if self.url != nil { throw .usage("\(command) works on a database directory (--db), not on a server (--url).") }
        return Self.databaseDirectory(self.database.resolvedPath, namespace: self.namespace)
    }

    /// The database of `namespace` in the data directory: `DATA/NAME`, as `canopy serve` keeps
    /// them (`DATA/default` by default). A data directory that is itself a database (made with
    /// `Database(path:)`) is used as it is when no namespace is named.
    static func databaseDirectory(_ data: String, namespace: String?) -> String {
        if namespace == nil, let names = try? FileManager.default.contentsOfDirectory(atPath: data),
            names.contains(where: {
                $0 == "LOCK" || ($0.hasPrefix("journal-") && $0.hasSuffix(".log"))
                    || ($0.hasPrefix("checkpoint-") && $0.hasSuffix(".canopy"))
            })
        {
            return data
        }
        return (data.hasSuffix("/") ? String(data.dropLast()) : data) + "/" + (namespace ?? "default")
    }
}

/// A database path argument, validated by the library's rules.
/// An empty argument (an unset shell variable, say) is refused rather than taken for the root.
func parsePath(_ text: String) throws(CLIError) -> DatabasePath {
    if text.isEmpty { throw .usage("Invalid path \"\": empty (use / for the root).") }
    let path: DatabasePath
    do {
        path = try DatabasePath(validating: text, function: "canopy")
    } catch {
        throw .usage(
            "Invalid path \"\(text)\": keys must be non-empty and can't contain \".\", \"#\", \"$\", \"[\", \"]\" or control characters.")
    }
    if path.isInfo { throw .usage("Invalid path \"\(text)\": .info is not stored data.") }
    return path
}
