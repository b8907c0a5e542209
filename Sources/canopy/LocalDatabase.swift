import Canopy
import CanopyCore
import Foundation

/// Opening the database directory and writing to it, for the data commands.
enum LocalDatabase {
    /// Opens the database at `path`. Reading commands require it to exist (a mistyped `--db`
    /// should not create an empty database); writing ones create it.
    static func open(_ path: String, create: Bool, loopMode: Database.LoopMode = .dedicatedThread) throws(CLIError) -> Database {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        if exists && !isDirectory.boolValue { throw .usage("\(path) is not a database directory.") }
        if !exists && !create {
            throw .failure("No database at \(path) (use --db DIR, $CANOPY_DB or --namespace; canopy set or canopy import creates one).")
        }
        var configuration = Database.Configuration()
        configuration.loopMode = loopMode
        do {
            return try Database(path: path, configuration)
        } catch {
            throw CLIError(error)
        }
    }

    /// Applies `write` and returns once it is durable.
    /// Opens the database in `directory`, applies `write`, waits until it is durable and closes.
    static func apply(_ write: WriteOperation, in directory: String, create: Bool) async throws(CLIError) {
        let db = try open(directory, create: create)
        defer { db.close() }
        try await apply(write, to: db)
    }

    static func apply(_ write: WriteOperation, to db: Database) async throws(CLIError) {
        let error: DatabaseError? = await withCheckedContinuation { continuation in
            db.write(write) { continuation.resume(returning: $0) }
        }
        if let error { throw CLIError(error) }
    }

    /// A `set` of the JSON `bytes` at `path`, validated as `setValue` would (export format and
    /// server values accepted).
    static func setOperation(_ bytes: [UInt8], at path: DatabasePath, function: String) throws(CLIError) -> WriteOperation {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            throw .usage("The JSON value is empty (write null to remove a value).")
        }
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(DatabaseError) -> WriteValue in
                try NodeImporter.writeValue(fromJSON: raw, location: path.keys, function: function)
            }
        }
        switch result {
        case .success(let value): return .set(path, value)
        case .failure(let error): throw CLIError(error)
        }
    }

    /// A multi-path update from a JSON object whose keys may be `a/b` paths (`null` removes),
    /// validated as `updateChildValues` would.
    static func updateOperation(_ bytes: [UInt8], at path: DatabasePath) throws(CLIError) -> WriteOperation {
        let json = try parseJSON(bytes)
        guard case .object(let members) = json else {
            throw .usage("update takes a JSON object of child paths and values, for example {\"name\": \"Ada\", \"stats/visits\": 3}.")
        }
        do {
            return WriteOperation(path: path, entries: try UpdateEntries.entries(members, location: path.keys, function: "update"))
        } catch {
            throw CLIError(error)
        }
    }
}

/// JSON text as a value; a syntax error is a usage error naming where it is.
func parseJSON(_ bytes: [UInt8]) throws(CLIError) -> JSONValue {
    do {
        var builder = JSONValueBuilder()
        return try JSONParser().parse(bytes, into: &builder)
    } catch let error as DatabaseError {
        throw .usage(error.message)
    } catch {
        throw .usage("Invalid JSON: \(error)")
    }
}
