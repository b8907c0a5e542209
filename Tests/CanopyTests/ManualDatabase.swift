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
