import CanopyCore
import CanopyStorage

extension FuzzTarget {
    /// The JSON parser, and the importer that turns JSON into a tree for a write.
    ///
    /// Properties: the parser accepts or throws `.invalidJSON` with a located message; what it
    /// accepts prints back to text that parses to an equal value; the importer's fast path
    /// (`NodeBuilder`) and its exact path (`ValueConverter`) agree; an imported tree printed and
    /// imported again is the same tree.
    public static let json = FuzzTarget(
        name: "json",
        dictionary: [
            "{", "}", "[", "]", "\"", ":", ",", "null", "true", "false", "-0", "1e400", "\\u0000", "\\ud800", "\\\"", ".sv", ".value",
            ".priority", "\"timestamp\"", "\"increment\"", "9223372036854775808", "1.5e-320",
        ]
    ) { bytes throws(FuzzFailure) in
        let value: JSONValue
        do {
            var builder = JSONValueBuilder()
            value = try JSONParser().parse(bytes, into: &builder)
        } catch let error as DatabaseError {
            try require(error.code == .invalidJSON, "parser threw \(error.code), not invalidJSON, for \(describe(bytes))")
            try require(error.message.hasPrefix("Invalid JSON at line "), "unlocated parser message \(error.message)")
            return
        } catch {
            throw FuzzFailure("parser threw a non-DatabaseError \(error) for \(describe(bytes))")
        }
        let printed = JSONWriter.bytes(value)
        do {
            var builder = JSONValueBuilder()
            let again = try JSONParser().parse(printed, into: &builder)
            try require(again == value, "printing changed the value: \(describe(bytes)) printed as \(describe(printed))")
        } catch let failure as FuzzFailure {
            throw failure
        } catch {
            throw FuzzFailure("the printed form of \(describe(bytes)) does not parse: \(error)")
        }
        try checkImport(bytes)
    }

    /// The importer at a few locations: the fast path agrees with the exact converter.
    private static func checkImport(_ bytes: [UInt8]) throws(FuzzFailure) {
        for location in [[ChildKey](), [ChildKey("a")]] {
            let imported: WriteValue
            do throws(DatabaseError) {
                imported = try bytes.withBytes { raw throws(DatabaseError) in
                    try NodeImporter.writeValue(fromJSON: raw, location: location, function: "set")
                }
            } catch {
                try require(
                    [.invalidJSON, .invalidValue, .invalidKey, .invalidPath, .invalidPriority].contains(error.code),
                    "the importer threw \(error.code) for \(describe(bytes))"
                )
                continue
            }
            var valueBuilder = JSONValueBuilder()
            guard let json = try? JSONParser().parse(bytes, into: &valueBuilder) else {
                throw FuzzFailure("the importer accepted what the parser refuses: \(describe(bytes))")
            }
            let exact: WriteValue
            do throws(DatabaseError) {
                var converter = try ValueConverter(function: "set", location: location.map(\.string))
                exact = try converter.convert(json)
            } catch {
                throw FuzzFailure("the importer accepted what the converter refuses (\(error.message)): \(describe(bytes))")
            }
            try require(imported.node == exact.node, "the fast importer and the converter disagree on \(describe(bytes))")
            try require(
                imported.placeholders.count == exact.placeholders.count, "the importers disagree on server values in \(describe(bytes))")
            if imported.placeholders.isEmpty {
                let printed = NodeWriter.bytes(imported.node, export: true, pretty: false)
                let again: WriteValue
                do throws(DatabaseError) {
                    again = try printed.withBytes { raw throws(DatabaseError) in
                        try NodeImporter.writeValue(fromJSON: raw, location: location, function: "set")
                    }
                } catch {
                    throw FuzzFailure("the exported tree of \(describe(bytes)) does not import again: \(error.message)")
                }
                try require(again.node == imported.node, "export and import changed the tree of \(describe(bytes))")
            }
        }
    }
}
