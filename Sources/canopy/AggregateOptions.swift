import ArgumentParser
import Canopy
import CanopyConnection
import CanopyCore
import NIOHTTP1

/// The aggregate flags of `get` and `observe`: with any of them the command prints the aggregate
/// of the query's range (one JSON object: `{"count":4,"sum(stars)":16.5}`) instead of its data.
struct AggregateOptions: ParsableArguments {
    @Flag(help: "Print the number of children in range (with the other aggregate flags: one JSON object).")
    var count = false

    @Option(
        help: ArgumentHelp("Print the sum of the numbers at this child path (repeatable; $value: the child itself).", valueName: "FIELD"))
    var sum: [String] = []

    @Option(help: ArgumentHelp("Print the average of the numbers at this child path (repeatable).", valueName: "FIELD"))
    var avg: [String] = []

    @Option(help: ArgumentHelp("Print the smallest number at this child path (repeatable).", valueName: "FIELD"))
    var min: [String] = []

    @Option(help: ArgumentHelp("Print the largest number at this child path (repeatable).", valueName: "FIELD"))
    var max: [String] = []

    var isEmpty: Bool { !self.count && self.sum.isEmpty && self.avg.isEmpty && self.min.isEmpty && self.max.isEmpty }

    /// The functions, in the order count, sums, averages, minimums, maximums.
    var functions: [AggregateFunction] {
        (self.count ? [.count] : []) + self.sum.map(AggregateFunction.sum) + self.avg.map(AggregateFunction.average)
            + self.min.map(AggregateFunction.min) + self.max.map(AggregateFunction.max)
    }

    /// The `aggregate=` parameter of the REST API.
    var parameter: String { self.functions.map(\.description).joined(separator: ",") }

    func validate() throws {
        guard !self.isEmpty else { return }
        do { _ = try AggregateRequest.parse(self.parameter) } catch { throw ValidationError(error.message) }
    }

    /// How the command prints an aggregate: one JSON object, keys sorted.
    static func text(_ json: JSONValue, pretty: Bool) -> String {
        JSONWriter.string(json, options: pretty ? [.pretty, .sortedKeys] : [.sortedKeys])
    }

    /// The aggregate of `query` now, as printed.
    func read(_ query: DatabaseQuery, pretty: Bool) async throws(CLIError) -> String {
        do {
            return Self.text(try await query.aggregate(self.functions).getData().json, pretty: pretty)
        } catch {
            throw CLIError.from(error)
        }
    }

    /// The aggregate computed by a running server (`GET …?aggregate=`), as printed.
    func read(_ server: ServerURL, path: DatabasePath, query: QueryOptions, pretty: Bool) async throws(CLIError) -> String {
        let target = server.target(path, try query.restParameters(what: "an aggregate") + [("aggregate", self.parameter)])
        let response = try await ServerClient.send(server, .GET, target)
        return Self.text(try parseJSON(response.body), pretty: pretty)
    }
}

extension QueryOptions {
    /// The REST query parameters of these flags (`orderBy`, limits, bounds), for a request the
    /// server answers itself. REST bounds take no child key.
    func restParameters(what: String) throws(CLIError) -> [(String, String)] {
        if self.isEmpty { return [] }
        var parameters: [(String, String)] = []
        if self.orderByKey {
            parameters.append(("orderBy", #""$key""#))
        } else if self.orderByValue {
            parameters.append(("orderBy", #""$value""#))
        } else if let child = self.orderByChild {
            parameters.append(("orderBy", JSONWriter.string(.string(child))))
        } else {
            parameters.append(("orderBy", #""$priority""#))
        }
        if let n = self.limitToFirst { parameters.append(("limitToFirst", "\(n)")) }
        if let n = self.limitToLast { parameters.append(("limitToLast", "\(n)")) }
        let bounds = [
            ("startAt", self.startAt, "--start-at"), ("startAfter", self.startAfter, "--start-after"), ("endAt", self.endAt, "--end-at"),
            ("endBefore", self.endBefore, "--end-before"), ("equalTo", self.equalTo, "--equal-to"),
        ]
        for (name, values, flag) in bounds where !values.isEmpty {
            if values.count > 1 { throw .usage("\(flag): with --url, \(what) takes a bound without a child key.") }
            _ = try Self.bound(values, flag: flag)
            parameters.append((name, values[0]))
        }
        return parameters
    }
}
