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
            child key to start or end at among equal values. With --count, --sum, --avg, --min or \
            --max, prints the aggregate of the query's range instead, as one JSON object (with \
            --url the server computes it; bounds then take no child key).

            Examples:
              canopy get users/ada
              canopy get users --order-by-child score --limit-to-last 3 --pretty
              canopy get users --order-by-key --start-at '"b"' --shallow
              canopy get / --export --url http://127.0.0.1:9000
              canopy get ratings --order-by-child stars --start-at 3 --count --avg stars
            """
    )

    @Argument(help: "The location, for example users/ada (/ for the root).")
    var path: String

    @OptionGroup var format: ReadFormatOptions
    @OptionGroup(title: "Query") var query: QueryOptions
    @OptionGroup(title: "Aggregate") var aggregate: AggregateOptions
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let path = try parsePath(self.path)
        let text: String
        if !self.aggregate.isEmpty {
            if self.format.shallow || self.format.export { throw CLIError.usage("--shallow and --export do not apply to an aggregate.") }
            switch try self.connection.target {
            case .local(let directory):
                let db = try LocalDatabase.open(directory, create: false)
                defer { db.close() }
                let query = try self.query.apply(to: db.reference(withPath: path.string))
                text = try await self.aggregate.read(query, pretty: self.format.pretty)
            case .remote(let server):
                text = try await self.aggregate.read(server, path: path, query: self.query, pretty: self.format.pretty)
            }
            Output.line(text)
            return
        }
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
