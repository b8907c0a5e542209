import Canopy
import CanopyConnection
import CanopyCore
import NIOHTTP1

/// The data commands against a running `canopy serve` (`--url`), over its REST API.
enum Remote {
    /// What `get` prints: plain reads as the server answers them (re-indented with `--pretty`);
    /// queries are run by the library on a local copy of the location, so that they order,
    /// validate and print exactly as against a database directory.
    static func get(_ server: ServerURL, path: DatabasePath, query: QueryOptions?, format: ReadFormat) async throws(CLIError) -> String {
        if format.shallow && (query?.isEmpty ?? true) {
            let response = try await ServerClient.send(server, .GET, server.target(path, [("shallow", "true")]))
            let json = try parseJSON(response.body)
            return JSONWriter.string(json, options: format.pretty ? [.pretty, .sortedKeys] : [.sortedKeys])
        }
        let mirror = try await self.mirror(server, path: path)
        defer { mirror.close() }
        return try await Reader.read(mirror, path: path, query: query, format: format)
    }

    /// An in-memory copy of the data at `path` (with priorities).
    static func mirror(_ server: ServerURL, path: DatabasePath) async throws(CLIError) -> Database {
        let response = try await ServerClient.send(server, .GET, server.target(path, [("format", "export")]))
        let mirror: Database
        do {
            mirror = try Database.inMemory()
            try await mirror.reference(withPath: path.string).importJSON(response.body)
        } catch {
            throw .failure("The server's answer is not valid data: \(error)")
        }
        return mirror
    }

    static func put(_ server: ServerURL, path: DatabasePath, body: [UInt8]) async throws(CLIError) {
        _ = try await ServerClient.send(server, .PUT, server.target(path, [("print", "silent")]), body: body)
    }

    static func patch(_ server: ServerURL, path: DatabasePath, body: [UInt8]) async throws(CLIError) {
        _ = try await ServerClient.send(server, .PATCH, server.target(path, [("print", "silent")]), body: body)
    }

    static func post(_ server: ServerURL, path: DatabasePath, body: [UInt8]) async throws(CLIError) -> String {
        let response = try await ServerClient.send(server, .POST, server.target(path), body: body)
        guard case .string(let name)? = try parseJSON(response.body)["name"] else {
            throw .failure("The server did not answer the push with the new key.")
        }
        return name
    }

    static func delete(_ server: ServerURL, path: DatabasePath) async throws(CLIError) {
        _ = try await ServerClient.send(server, .DELETE, server.target(path, [("print", "silent")]))
    }

    /// The write a streamed `put` or `patch` event stands for, at the listened `location`.
    static func streamedWrite(_ event: String, _ data: [UInt8], location: DatabasePath) throws(CLIError) -> WriteOperation {
        let json = try parseJSON(data)
        guard case .string(let pathText)? = json["path"], let value = json["data"] else {
            throw .failure("The server sent a malformed \(event) event.")
        }
        do {
            let path = location.appending(try DatabasePath(validating: pathText, function: "stream"))
            if event == "put" {
                return .set(path, try ValueConverter.writeValue(value, at: path.keys, function: "stream"))
            }
            guard case .object(let members) = value else { throw CLIError.failure("The server sent a patch event without an object.") }
            var entries: [WriteOperation.Entry] = []
            for (key, member) in members {
                let relative = try DatabasePath(validating: key, function: "stream")
                entries.append(
                    WriteOperation.Entry(
                        path: relative.keys, value: try ValueConverter.writeValue(member, at: path.keys + relative.keys, function: "stream")
                    ))
            }
            return WriteOperation(path: path, entries: entries)
        } catch let error as CLIError {
            throw error
        } catch {
            throw .failure("The server sent an event that is not valid data: \(error)")
        }
    }
}
