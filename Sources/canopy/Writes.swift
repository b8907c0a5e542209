import ArgumentParser
import Canopy
import CanopyCore

/// `canopy set PATH JSON`: replaces the data at a location.
struct SetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Replace the data at a path with a JSON value.",
        discussion: """
            The value comes from the argument, from --file, or from stdin with -. Export format \
            (.priority, .value) and server values ({".sv": "timestamp"}) are accepted. Returns \
            once the write is durable.

            Examples:
              canopy set users/ada '{"name": "Ada", "score": 36}'
              canopy set config --file config.json
              echo '"hello"' | canopy set greeting -
            """
    )

    @OptionGroup var write: ValueWrite

    func run() async throws {
        try await self.write.apply(send: Remote.put) { bytes, path in
            try LocalDatabase.setOperation(bytes, at: path, function: "set")
        }
    }
}

/// `canopy update PATH JSON`: writes several children (or deeper paths) at once.
struct Update: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the members of a JSON object as children of a path, leaving the others.",
        discussion: """
            Member names may be paths (a/b); null removes. All members are written at once.

            Examples:
              canopy update users/ada '{"score": 40, "stats/visits": 3}'
              canopy update users --file changes.json
            """
    )

    @OptionGroup var write: ValueWrite

    func run() async throws {
        try await self.write.apply(send: Remote.patch) { bytes, path in
            try LocalDatabase.updateOperation(bytes, at: path)
        }
    }
}

/// `canopy push PATH JSON`: adds a child under a new chronological key and prints the key.
struct Push: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add a JSON value under a new, chronologically ordered key; prints the key.",
        discussion: """
            Examples:
              canopy push messages '{"text": "hi", "at": {".sv": "timestamp"}}'
              key=$(canopy push queue '"job"')
            """
    )

    @Argument(help: "The list's location, for example messages.")
    var path: String

    @OptionGroup var value: ValueInput
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let path = try parsePath(self.path)
        let bytes = try self.value.bytes()
        switch try self.connection.target {
        case .local(let directory):
            _ = try LocalDatabase.setOperation(bytes, at: path.appending(ChildKey(String(repeating: "-", count: 20))), function: "push")
            let db = try LocalDatabase.open(directory, create: true)
            defer { db.close() }
            guard let key = db.reference(withPath: path.string).childByAutoId().key else { throw CLIError.failure("Could not make a key.") }
            let write = try LocalDatabase.setOperation(bytes, at: path.appending(ChildKey(key)), function: "push")
            try await LocalDatabase.apply(write, to: db)
            Output.line(key)
        case .remote(let server):
            _ = try LocalDatabase.setOperation(bytes, at: path.appending(ChildKey(String(repeating: "-", count: 20))), function: "push")
            Output.line(try await Remote.post(server, path: path, body: bytes))
        }
    }
}

/// `canopy remove PATH`: deletes the data at a location.
struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete the data at a path.",
        discussion: """
            Removing the root (everything) needs --yes.

            Examples:
              canopy remove users/ada
              canopy remove / --yes
            """
    )

    @Argument(help: "The location, for example users/ada.")
    var path: String

    @Flag(help: "Confirm removing the root.")
    var yes = false

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let path = try parsePath(self.path)
        if path.isRoot && !self.yes { throw CLIError.usage("Removing / deletes everything: add --yes if you mean it.") }
        switch try self.connection.target {
        case .local(let directory):
            try await LocalDatabase.apply(.set(path, WriteValue(node: .empty)), in: directory, create: false)
        case .remote(let server):
            try await Remote.delete(server, path: path)
        }
    }
}
