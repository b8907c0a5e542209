import ArgumentParser
import Canopy
import CanopyCore

/// How `get` prints what it reads.
struct ReadFormatOptions: ParsableArguments {
    @Flag(help: "Indent the JSON.")
    var pretty = false

    @Flag(help: "Only the keys of the children (each with the value true), not their contents.")
    var shallow = false

    @Flag(help: "Export format: keep priorities (as .priority and .value members) and never produce arrays.")
    var export = false

    func validate() throws {
        if self.shallow && self.export { throw ValidationError("--shallow and --export do not go together.") }
    }

    var value: ReadFormat { ReadFormat(pretty: self.pretty, shallow: self.shallow, export: self.export) }
}

/// How to print data (the flags' values, usable without parsing).
struct ReadFormat {
    var pretty = false
    var shallow = false
    var export = false
}

/// Reading a location (or a query) of a database as the JSON text `get` prints.
enum Reader {
    /// - Parameter query: The query flags (`nil`: none).
    static func read(_ db: Database, path: DatabasePath, query: QueryOptions?, format: ReadFormat) async throws(CLIError) -> String {
        let reference = db.reference(withPath: path.string)
        let query = query.flatMap { $0.isEmpty ? nil : $0 }
        let snapshot: DataSnapshot
        do {
            snapshot = try await (query == nil ? reference : try query!.apply(to: reference)).getData()
        } catch {
            throw CLIError.from(error)
        }
        if format.shallow, snapshot.hasChildren() {
            return Self.object(snapshot.childSnapshots.map { ($0.key ?? "", "true") }, pretty: format.pretty)
        }
        if query != nil, snapshot.hasChildren() {
            // Members in query order (JSON objects are unordered, but people read this).
            let members = snapshot.childSnapshots.map { ($0.key ?? "", $0.jsonString(pretty: format.pretty, exportFormat: format.export)) }
            return Self.object(members, pretty: format.pretty)
        }
        return snapshot.jsonString(pretty: format.pretty, exportFormat: format.export)
    }

    /// A JSON object from members whose values are JSON text already, in the given order.
    static func object(_ members: [(key: String, json: String)], pretty: Bool) -> String {
        if members.isEmpty { return "{}" }
        var out = "{"
        for (index, member) in members.enumerated() {
            if index > 0 { out += "," }
            if pretty { out += "\n  " }
            out += JSONWriter.string(.string(member.key))
            out += pretty ? ": " : ":"
            out += pretty ? member.json.replacingOccurrences(of: "\n", with: "\n  ") : member.json
        }
        out += pretty ? "\n}" : "}"
        return out
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        self.split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
