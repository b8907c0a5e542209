import Canopy
import CanopyCore

extension Observe {
    /// `observe` with aggregate flags: one JSON line per value of the aggregate, until Ctrl-C.
    func observeAggregate(_ path: DatabasePath) throws {
        let failure = Locked<CLIError?>(nil)
        switch try self.connection.target {
        case .local(let directory):
            let db = try LocalDatabase.open(directory, create: false, loopMode: .callerThread)
            let aggregate = try self.query.apply(to: db.reference(withPath: path.string)).aggregate(self.aggregate.functions)
            aggregate.observe(
                with: { Output.line(AggregateOptions.text($0.json, pretty: false)) },
                withCancel: { error in
                    if let error = error as? DatabaseError, error.code == .closed { return }
                    failure.withLock { $0 = $0 ?? CLIError.from(error) }
                    db.close()
                })
            try db.run()
        case .remote(let server):
            let target = server.target(
                path, try self.query.restParameters(what: "an aggregate") + [("aggregate", self.aggregate.parameter)])
            // A database only to wait on, as `observe --url` does: run() returns when the stream
            // ends (closing it) or on Ctrl-C.
            var configuration = Database.Configuration()
            configuration.loopMode = .callerThread
            let waiter = try Database.inMemory(configuration)
            Self.follow(server, target, closing: waiter, failure: failure) { event, data throws(CLIError) in
                // Each put holds the aggregate's whole value; a patch is ignored.
                guard event == "put" else { return }
                guard let value = try parseJSON(data)["data"] else { throw .failure("The server sent a malformed put event.") }
                Output.line(AggregateOptions.text(value, pretty: false))
            }
            try waiter.run()
        }
        if let error = failure.withLock({ $0 }) { throw error }
    }
}
