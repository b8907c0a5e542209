import ArgumentParser
import CanopyConnection
import NIOHTTP1

/// `canopy rules`: a server's security rules, and testing reads and writes against a rules file.
struct Rules: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print or replace a server's security rules, or test a read or write against a rules file.",
        discussion: """
            get and set work on a running canopy serve (its /.settings/rules.json, admin only); \
            test works offline, like the console's rules playground.

            Examples:
              canopy rules get --url http://127.0.0.1:9000
              canopy rules set database.rules.json --url http://127.0.0.1:9000 --auth-token "$TOKEN"
              canopy rules test --rules database.rules.json --read users/alice --uid alice
            """,
        subcommands: [RulesGet.self, RulesSet.self, RulesTest.self]
    )
}

/// `canopy rules get`: prints the rules document of a server's namespace.
struct RulesGet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Print the security rules of a server's namespace.",
        discussion: """
            Prints the document the server answers for /.settings/rules.json.

            Examples:
              canopy rules get --url http://127.0.0.1:9000
              canopy rules get --url http://127.0.0.1:9000 --namespace blog --auth-token "$TOKEN" > database.rules.json
            """
    )

    @OptionGroup var server: ServerOptions

    func run() async throws {
        let server = try self.server.server
        let response = try await ServerClient.send(
            server, .GET, server.target(resource: "/.settings/rules.json", [("print", "pretty")]), headers: self.server.headers)
        var text = String(decoding: response.body, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        Output.line(text)
    }
}

/// `canopy rules set FILE`: checks a rules file, then makes it the rules of a server's namespace.
struct RulesSet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Replace the security rules of a server's namespace with a rules file.",
        discussion: """
            The file is checked here first, as the server would check it: a bad document is \
            reported as FILE:LINE:COLUMN: message (exit 64) and nothing is sent. The file is sent \
            as written, comments included. A refusal by the server is reported on one line.

            Examples:
              canopy rules set database.rules.json --url http://127.0.0.1:9000 --auth-token "$TOKEN"
              canopy rules get --url http://127.0.0.1:9000 | canopy rules set - --url http://127.0.0.1:9001
            """
    )

    @Argument(help: ArgumentHelp("The rules file (database.rules.json), or - for stdin.", valueName: "file"))
    var file: String

    @OptionGroup var server: ServerOptions

    func run() async throws {
        let rules = try RulesFile(self.file)
        let server = try self.server.server
        _ = try await ServerClient.send(
            server, .PUT, server.target(resource: "/.settings/rules.json", [("print", "silent")]), body: rules.bytes,
            headers: self.server.headers)
    }
}
