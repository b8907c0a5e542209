import Canopy

/// The base of a suite whose tests each work on their own database as
/// ``manualDatabase(clock:maxTriggerDepth:)`` makes: Swift Testing makes a suite instance for each
/// test, so `db` is fresh in every test and closed when the test ends.
class ManualDatabaseSuite {
    let db: Database

    init(clock: Int64? = nil) throws { self.db = try manualDatabase(clock: clock) }

    deinit { self.db.close() }

    /// A reference to `path` in `db`, where `value` is written and drained.
    func reference(holding value: Any, at path: String) throws -> DatabaseReference {
        let ref = self.db.reference(withPath: path)
        try ref.queueSetValue(value)
        self.db.drain()
        return ref
    }
}
