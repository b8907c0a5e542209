import CanopyCore

extension Database {
    /// Runs `body` on the loop thread with access to the state; returns `false` (and never runs
    /// it) when the database is closed.
    @discardableResult
    package func onLoop(_ body: @escaping @Sendable (LoopAccess) -> Void) -> Bool {
        let core = self.core
        return core.perform { [core] in body(LoopAccess(core: core)) }
    }

    /// Applies `write` on the loop; `completion` fires on the loop thread once it is durable
    /// under the sync policy (or with the error that refused or failed it).
    package func write(_ write: WriteOperation, completion: (@Sendable (DatabaseError?) -> Void)?) {
        self.core.write(write, completion: completion)
    }
}
