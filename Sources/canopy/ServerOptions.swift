import ArgumentParser
import Foundation

/// Where a server-only command works: a running `canopy serve` (`--url`), one of its namespaces,
/// and the admin token it was started with.
struct ServerOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The running canopy serve (for example http://127.0.0.1:9000).", valueName: "URL"))
    var url: String

    @Option(
        name: .customLong("namespace"),
        help: ArgumentHelp("The database on the server, as canopy serve names them (default: default).", valueName: "NAME"))
    var namespace: String?

    @Option(
        name: .customLong("auth-token"),
        help: ArgumentHelp(
            "The server's admin token (canopy serve --auth-token), sent as 'Authorization: Bearer TOKEN' (default: $CANOPY_AUTH_TOKEN).",
            valueName: "TOKEN"))
    var authToken: String?

    func validate() throws {
        try ConnectionOptions.validate(url: self.url)
        try ConnectionOptions.validate(namespace: self.namespace)
    }

    /// The server, with the namespace as its `ns` parameter.
    var server: ServerURL {
        get throws(CLIError) { try ConnectionOptions.server(self.url, namespace: self.namespace) }
    }

    /// The request headers that carry the token, if there is one.
    var headers: [(String, String)] {
        let token = self.authToken ?? ProcessInfo.processInfo.environment["CANOPY_AUTH_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        return token.map { [("Authorization", "Bearer \($0)")] } ?? []
    }
}
