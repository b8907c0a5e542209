import ArgumentParser
import Canopy
import CanopyCore

/// `canopy get PATH`: prints the data at a location, or a query's result, as JSON.
struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the data at a path (or a query's result) as JSON.",
        discussion: """
            Prints null when there is no data. With a query flag, the children are printed in \
            query order. Bounds are JSON values (quote strings); an optional second value is the \
            child key to start or end at among equal values.

            Examples:
              canopy get users/ada
              canopy get users --order-by-child score --limit-to-last 3 --pretty
              canopy get users --order-by-key --start-at '"b"' --shallow
              canopy get / --export --url http://127.0.0.1:9000
            """
    )

    @Argument(help: "The location, for example users/ada (/ for the root).")
    var path: String

    @OptionGroup var format: ReadFormatOptions
    @OptionGroup(title: "Query") var query: QueryOptions
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let path = try parsePath(self.path)
        let text: String
        switch try self.connection.target {
        case .local(let directory):
            let db = try LocalDatabase.open(directory, create: false)
            defer { db.close() }
            text = try await Reader.read(db, path: path, query: self.query, format: self.format.value)
        case .remote(let server):
            text = try await Remote.get(server, path: path, query: self.query, format: self.format.value)
        }
        Output.line(text)
    }
}
