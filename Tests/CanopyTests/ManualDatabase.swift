import Canopy

/// An in-memory database whose loop runs only in `drain()`, so event sequences are deterministic;
/// `clock` fixes the server time, `maxTriggerDepth` the trigger depth limit.
func manualDatabase(clock: Int64? = nil, maxTriggerDepth: Int? = nil) throws -> Database {
    var configuration = Database.Configuration()
    configuration.loopMode = .manual
    if let clock { configuration.clock = { clock } }
    if let maxTriggerDepth { configuration.maxTriggerDepth = maxTriggerDepth }
    return try Database.inMemory(configuration)
}

/// A database as ``manualDatabase(clock:maxTriggerDepth:)`` makes, whose `path` holds `value`
/// (written and drained), and a reference to `path`.
func manualDatabase(holding value: Any, at path: String) throws -> (Database, DatabaseReference) {
    let db = try manualDatabase()
    let ref = db.reference(withPath: path)
    do {
        try ref.queueSetValue(value)
    } catch {
        db.close()
        throw error
    }
    db.drain()
    return (db, ref)
}
