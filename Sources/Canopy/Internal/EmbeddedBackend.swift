import CanopyCore
import CanopyStorage

/// An embedded database's ``DatabaseBackend``: the data lives here, in memory or in the journal
/// (``DatabaseCore/store``). A write is applied, journaled and its triggers run; its completion
/// waits for the journal under the sync policy. There is no server: every location is complete,
/// reads answer at once, and onDisconnect is refused.
// @unchecked Sendable: used on the loop thread only (its `core`'s jobs call it there).
final class EmbeddedBackend: DatabaseBackend, @unchecked Sendable {
    // unowned(unsafe): the core owns its backend and calls it only while alive; every write goes
    // through here, so no reference counting on the way.
    unowned(unsafe) let core: DatabaseCore

    init(core: DatabaseCore) {
        self.core = core
    }

    var isRemote: Bool { false }

    func apply(
        _ write: WriteOperation, now: Int64?, completion: (@Sendable (DatabaseError?) -> Void)?, applied: (() -> Void)?
    ) {
        let core = self.core
        if let refusal = core.store?.refusal {
            completion?(refusal)
            return
        }
        let depth = core.triggers.depth
        if depth > core.triggers.maxDepth {
            core.refuseTooDeep(write, completion: completion)
            return
        }
        // With a trigger watching what the write changes, keep what it needs of the tree before it.
        var before = core.triggers.tree.isEmpty ? nil : core.triggers.before(write, root: core.engine.root)
        let events: [Event]
        let now = now ?? core.clock()
        do throws(DatabaseError) {
            events = try core.engine.apply(write, now: now)
        } catch {
            completion?(error)
            return
        }
        core.releaseReplaced()
        // Durable: the completion waits for the journal; observers fire now, the write pending.
        if let store = core.store { store.record(write, now: now, completion: core.pendingUntilCompleted(write, completion: completion)) }
        core.deliver(events)
        core.deliverViewChanges()
        core.deliverAggregateChanges()
        core.followersChanged(by: write, root: core.engine.root)
        if core.store == nil { completion?(nil) }
        applied?()
        if before != nil {
            // Let go of the tree before the write first: the writes the triggers queued (run by
            // `drain`) then change the tree in place instead of copying the nodes it shares.
            core.runTriggers(of: write, before: before.take()!, depth: depth)
            core.triggers.drain()
        }
    }

    /// Composes the writes against the tree into one write: one journal record, one round of events.
    func commitOverlapping(_ writes: [WriteOperation], completion: @escaping @Sendable (DatabaseError?) -> Void) {
        let now = self.core.clock()
        guard let write = self.core.composed(writes, now: now) else {
            completion(nil)
            return
        }
        self.core.apply(write, now: now, completion: completion)
    }

    func onDisconnect(_ write: WriteOperation?, at path: DatabasePath, done: @escaping (DatabaseError?) -> Void) {
        done(
            DatabaseError(
                .invalidOperation,
                "onDisconnect at \(path.string) needs a database connected to a server (Database(url:)): an embedded database never disconnects."
            ))
    }

    func get(at path: DatabasePath, params: QueryParams, _ done: @escaping (Result<Node, DatabaseError>) -> Void) {
        done(.success(self.core.engine(for: path).queryResult(at: path, params: params)))
    }

    func register(_ registration: EventRegistration, at path: DatabasePath, params: QueryParams, register: @escaping () -> Void) {
        register()
    }

    func unregistered(_ registration: EventRegistration) {}

    /// Pinning the query's index (done for both) is all there is to it.
    func setKeepSynced(_ keepSynced: Bool, at path: DatabasePath, params: QueryParams) {}

    func isFromCache(_ path: DatabasePath) -> Bool { false }

    func goOffline() {}

    func goOnline() {}

    var isSettled: Bool { true }

    /// The journal is closed by the core, after the writes queued before closing.
    func close() {}
}
