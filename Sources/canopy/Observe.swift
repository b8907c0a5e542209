import ArgumentParser
import Canopy
import CanopyCore

/// `canopy observe PATH`: prints one line per event until Ctrl-C.
struct Observe: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the events of a location or query, one line each, until Ctrl-C.",
        discussion: """
            Lines are JSON by default: {"event":"child_added","key":"ada","previous":null,"value":{...}} \
            ("previous" is the key of the preceding child in query order, for child_added, \
            child_changed and child_moved). --format text prints a readable form, coloured on a \
            terminal. On a database directory it shows the current data (the initial events); with \
            --url it follows a running canopy serve, so writes made by any client appear live, and \
            child events are derived by the library from the server's stream.

            With --count, --sum, --avg, --min or --max it prints the aggregate of the query's \
            range instead: one JSON object per line, the current value first, then a line each \
            time a write changes it (with --url the server keeps it live; bounds then take no \
            child key).

            Examples:
              canopy observe users --events child_added,child_removed
              canopy observe scores --order-by-value --limit-to-last 3 --url http://127.0.0.1:9000
              canopy observe / --events value --format text --url http://127.0.0.1:9000
              canopy observe ratings --order-by-child stars --start-at 3 --count --avg stars
            """
    )

    @Argument(help: "The location, for example users.")
    var path: String

    @Option(
        help: ArgumentHelp(
            "The events to print: value, child_added, child_changed, child_removed, child_moved (comma-separated).", valueName: "LIST"))
    var events = "child_added,child_changed,child_removed,child_moved"

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case json
        case text
    }

    @Option(help: ArgumentHelp("json (one JSON object per line) or text.", valueName: "FORMAT"))
    var format: Format = .json

    @OptionGroup(title: "Query") var query: QueryOptions
    @OptionGroup(title: "Aggregate") var aggregate: AggregateOptions
    @OptionGroup var connection: ConnectionOptions

    static let eventNames: [(String, DataEventType)] = [
        ("value", .value), ("child_added", .childAdded), ("child_changed", .childChanged),
        ("child_removed", .childRemoved), ("child_moved", .childMoved),
    ]

    var eventTypes: [DataEventType] {
        get throws(CLIError) {
            var types: [DataEventType] = []
            for name in self.events.split(separator: ",").map({ $0.trimmingSpaces }) {
                guard let type = Self.eventNames.first(where: { $0.0 == name })?.1 else {
                    throw .usage(
                        "--events: unknown event \"\(name)\"; use value, child_added, child_changed, child_removed or child_moved.")
                }
                if !types.contains(type) { types.append(type) }
            }
            if types.isEmpty { throw .usage("--events: name at least one event.") }
            return types
        }
    }

    func validate() throws {
        do { _ = try self.eventTypes } catch { throw ValidationError(error.message) }
    }

    func run() throws {
        let path = try parsePath(self.path)
        if !self.aggregate.isEmpty { return try self.observeAggregate(path) }
        let types = try self.eventTypes
        let printer = EventPrinter(format: self.format, colour: self.format == .text && Output.stdoutIsTerminal)
        let failure = Locked<CLIError?>(nil)
        switch try self.connection.target {
        case .local(let directory):
            let db = try LocalDatabase.open(directory, create: false, loopMode: .callerThread)
            Self.attach(try self.query.apply(to: db.reference(withPath: path.string)), types: types, printer: printer, failure: failure)
            try db.run()
        case .remote(let server):
            var configuration = Database.Configuration()
            configuration.loopMode = .callerThread
            let mirror = try Database.inMemory(configuration)
            let attached = Locked(false)
            let target = server.target(path)
            let query = try self.query.apply(to: mirror.reference(withPath: path.string))
            Self.follow(server, target, closing: mirror, failure: failure) { event, data throws(CLIError) in
                mirror.write(try Remote.streamedWrite(event, data, location: path), completion: nil)
                // Observers start once the first put holds the current data.
                if attached.withLock({ was in
                    defer { was = true }
                    return !was
                }) {
                    Self.attach(query, types: types, printer: printer, failure: failure)
                }
            }
            try mirror.run()
        }
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// Follows the event stream of `target` on `server` in a detached task: `put` and `patch` events
    /// go to `data`; a `cancel` or `auth_revoked` event, an error or the stream's end is recorded in
    /// `failure` (the first one kept), then `db` closes, which ends its `run()`.
    static func follow(
        _ server: ServerURL, _ target: String, closing db: Database, failure: Locked<CLIError?>,
        data: @escaping @Sendable (String, [UInt8]) throws(CLIError) -> Void
    ) {
        Task.detached {
            do throws(CLIError) {
                try await ServerClient.stream(server, target) { event, bytes throws(CLIError) in
                    switch event {
                    case "put", "patch":
                        try data(event, bytes)
                    case "cancel":
                        throw .failure("The server ended the stream: \(String(decoding: bytes, as: UTF8.self)).")
                    case "auth_revoked":
                        throw .failure("The server revoked the stream's authorization.")
                    default:
                        break
                    }
                }
                throw .unavailable("The server at \(server.text) closed the stream.")
            } catch {
                failure.withLock { $0 = $0 ?? error }
            }
            db.close()
        }
    }

    /// Registers one observer per event type on `query`; the first cancellation closes its database.
    static func attach(_ query: DatabaseQuery, types: [DataEventType], printer: EventPrinter, failure: Locked<CLIError?>) {
        let db = query.database
        // In the order one write's events are delivered, so that initial events come in it too.
        let order: [DataEventType] = [.childRemoved, .childAdded, .childMoved, .childChanged, .value]
        for type in order where types.contains(type) {
            query.observe(
                type,
                andPreviousSiblingKeyWith: { snapshot, previous in
                    printer.print(type, snapshot, previous: previous)
                },
                withCancel: { error in
                    // Closing (Ctrl-C, or the stream ending) cancels every observer: not a failure.
                    if let error = error as? DatabaseError, error.code == .closed { return }
                    // Reported once, by the first observer canceled.
                    let first = failure.withLock { current in
                        defer { current = current ?? CLIError.from(error) }
                        return current == nil
                    }
                    if first { db.close() }
                })
        }
    }
}
