import CanopyCore
import Synchronization

extension Database {
    /// Registers a trigger (the Cloud Functions pattern, in-process): `handler` runs on the loop thread
    /// after every write that creates, changes or deletes data at a location matching `pattern`, or
    /// below it.
    ///
    /// `pattern` is a path whose segments are keys or `{name}` wildcards matching any one key; the
    /// keys matched are in ``TriggerEvent/params``. The event holds the data at the location just
    /// before and just after the write (a write above the location fires it for every matching location
    /// whose data the write changed; a write that changes nothing fires nothing).
    ///
    /// The handler runs right after the write is applied and its observers have been called, in write
    /// order, and before any other write. What it writes (any write or transaction through this
    /// database) is applied right after the triggers of the write it reacts to, before any other
    /// write, in the order issued; those are ordinary writes: observed, journaled, and they may fire
    /// triggers in turn, up to ``Configuration/maxTriggerDepth`` deep. Keep the handler short and
    /// don't block in it (the whole database waits); an error it throws goes to
    /// ``onTriggerError(_:)``.
    ///
    /// A trigger's writes are separate writes from the one it reacts to: a crash between the two
    /// leaves the first without the second, and triggers do not run again when a database reopens.
    /// Where two changes must always agree, write them together (``runTransaction(_:)``, ``batch()``).
    ///
    /// ```swift
    /// try db.onValueWritten("/posts/{postId}") { event in
    ///     let stars = event.after.childSnapshot(forPath: "starCount").value as? Int ?? 0
    ///     try db.reference(withPath: "stats/\(event.params["postId"]!)/stars").setValue(stars)
    /// }
    /// ```
    ///
    /// - Returns: The registration; ``TriggerRegistration/remove()`` ends it.
    /// - Throws: `DatabaseError` `.invalidPath` for an invalid pattern, `.closed` when the database
    ///   is closed.
    /// - Complexity: Registering: O(*d*) for a pattern of *d* segments. Per write, finding the triggers it
    ///   fires walks a trie of the patterns along the written paths: O(*e* · *d*) for *e* entries at depth
    ///   *d* (times the wildcard branches that exist), never a scan of every trigger; below a written
    ///   location, O(*c* log *n*) for the *c* children written there. Each trigger fired costs O(*d* log *n*)
    ///   plus its handler.
    @discardableResult
    public func onValueWritten(_ pattern: String, _ handler: @escaping (TriggerEvent) throws -> Void) throws(DatabaseError)
        -> TriggerRegistration
    {
        try self.addTrigger(.written, pattern, function: "onValueWritten", handler)
    }

    /// ``onValueWritten(_:_:)`` for changes that create data at the location (none before).
    ///
    /// - Complexity: As ``onValueWritten(_:_:)``.
    @discardableResult
    public func onValueCreated(_ pattern: String, _ handler: @escaping (TriggerEvent) throws -> Void) throws(DatabaseError)
        -> TriggerRegistration
    {
        try self.addTrigger(.created, pattern, function: "onValueCreated", handler)
    }

    /// ``onValueWritten(_:_:)`` for changes to data that exists before and after.
    ///
    /// - Complexity: As ``onValueWritten(_:_:)``.
    @discardableResult
    public func onValueUpdated(_ pattern: String, _ handler: @escaping (TriggerEvent) throws -> Void) throws(DatabaseError)
        -> TriggerRegistration
    {
        try self.addTrigger(.updated, pattern, function: "onValueUpdated", handler)
    }

    /// ``onValueWritten(_:_:)`` for changes that delete the data at the location.
    ///
    /// - Complexity: As ``onValueWritten(_:_:)``.
    @discardableResult
    public func onValueDeleted(_ pattern: String, _ handler: @escaping (TriggerEvent) throws -> Void) throws(DatabaseError)
        -> TriggerRegistration
    {
        try self.addTrigger(.deleted, pattern, function: "onValueDeleted", handler)
    }

    /// Where trigger failures go, on the loop thread: errors thrown by handlers (code
    /// `.userCodeFailed`, naming the pattern and location) and writes refused for being too many
    /// triggers deep (`.triggerDepthExceeded`). Replaces the previous handler; `nil` restores the
    /// default, which logs them at error level to the configuration's `logger`.
    ///
    /// - Complexity: O(1).
    public func onTriggerError(_ handler: ((DatabaseError) -> Void)?) {
        let box = LoopCallback(handler)
        let core = self.core
        core.perform { [core] in core.triggers.errorHandler = box.value }
    }

    private func addTrigger(
        _ kind: TriggerKind, _ pattern: String, function: String, _ handler: @escaping (TriggerEvent) throws -> Void
    ) throws(DatabaseError) -> TriggerRegistration {
        let parsed = try TriggerPattern(pattern, function: function)
        let id = self.core.triggers.nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let entry = TriggerEntry(id: id, kind: kind, pattern: parsed, database: self, handler: handler)
        guard self.core.addTrigger(entry) else { throw DatabaseCore.closedError }
        return TriggerRegistration(entry: entry, core: self.core)
    }
}
