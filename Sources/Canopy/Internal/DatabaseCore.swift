package import CanopyCore
package import CanopyLoop
import CanopyStorage
import Foundation
import Logging
import Synchronization

/// Wires the engine to the loop: every access to the tree and the views happens in a job on the
/// loop thread, and events are delivered there, in order, right after the write that raised them.
// @unchecked Sendable: `engine` is touched only on the loop thread (inside `loop.execute` jobs or
// while draining); the cross-thread state is in `Mutex`/`Atomic` values.
package final class DatabaseCore: @unchecked Sendable {
    package let loop: EventLoop
    /// Loop-thread only.
    package let engine: SyncEngine
    package let clock: @Sendable () -> Int64
    private let registrations = Mutex<[DatabaseHandle: EventRegistration]>([:])
    private let nextHandle = Atomic<UInt>(1)
    private let closed = Atomic<Bool>(false)
    /// The handle of the observer whose block runs on the loop thread now (0: none), so that a
    /// removal on another thread can wait for that call to return (see ``awaitDeliveries(to:)``).
    let delivering = Atomic<UInt>(0)
    /// Aggregate observers by handle (see `DatabaseCore+Aggregate.swift`).
    let aggregateObservers = Mutex<[DatabaseHandle: AggregateObserverBox]>([:])
    // Unchecked exclusivity (`changeListeners`, `backend`, `metadataWatchers`): each change is an
    // assignment, append or removal that calls no user code, and the listeners are called on a
    // copy, so the dynamic checks on every write cannot fail.
    /// Loop-thread only: followers of every applied write (see ``LoopAccess/followChanges(_:)``).
    @exclusivity(unchecked) private var changeListeners: [(id: UInt64, change: (WriteOperation, Node) -> Void)] = []
    private var nextChangeListener: UInt64 = 1

    /// The journal and checkpoints of a database opened at a path; `nil` in memory.
    let store: DurableStore?
    /// Loop-thread only (but for its atomic id counter): the triggers and the writes they queue.
    let triggers: TriggerState
    /// Loop-thread only: the `.info` tree (`connected`, `serverTimeOffset`), kept apart from the data.
    let infoEngine = SyncEngine(root: DatabaseCore.infoTree(connected: true, serverTimeOffset: 0))
    /// What an embedded database and a client of a server do differently: an ``EmbeddedBackend``
    /// (set at the end of `init`) or, for `Database(url:)`, the remote client (``install(_:)``,
    /// before the first job). Read on any thread; loop-thread only for its calls but `isRemote`.
    // An implicitly unwrapped optional: the embedded backend refers to the core, so it is made once
    // every other property is set.
    @exclusivity(unchecked) package private(set) var backend: (any DatabaseBackend)!

    // Snapshot metadata (see `DatabaseCore+Metadata.swift`), all loop-thread only.
    /// The writes applied but not yet durable (or, for a remote database, not yet acknowledged).
    package let pendingWrites = PendingWrites()
    /// The `.value` observers that asked for metadata changes.
    @exclusivity(unchecked) var metadataWatchers = MetadataWatchers()
    // Unchecked exclusivity: swapped with the engine's queue and back around the deliveries, never
    // touched by them (a nested delivery finds it empty and only costs a new buffer).
    /// Loop-thread only: an empty buffer (capacity kept) for the engine's next aggregate changes,
    /// so a write that changes a live aggregate allocates no queue.
    @exclusivity(unchecked) var spareAggregateChanges: [AggregateChange] = []

    init(
        loop: EventLoop, clock: @escaping @Sendable () -> Int64, root: Node = .empty, store: DurableStore? = nil,
        maxTriggerDepth: Int = 16, logger: Logger = Logger(label: "canopy")
    ) {
        self.loop = loop
        self.engine = SyncEngine(root: root)
        self.clock = clock
        self.store = store
        self.triggers = TriggerState(maxDepth: maxTriggerDepth, logger: logger)
        self.pendingWrites.settled = { [unowned self] write in self.metadataChanged(after: write) }
        if let store {
            let engine = self.engine
            store.currentRoot = { engine.root }
            store.undo = { [unowned self] root in self.undo(to: root) }
        }
        self.backend = EmbeddedBackend(core: self)
    }

    /// Makes this database a client of a server: `backend` replaces the embedded one. Before the
    /// first job runs only.
    package func install(_ backend: any DatabaseBackend) {
        self.backend = backend
    }

    var isClosed: Bool { self.closed.load(ordering: .acquiring) }

    static func systemClock() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    package static var closedError: DatabaseError { .databaseClosed }

    /// Runs `job` on the loop thread; returns `false` when the database is closed.
    ///
    /// Called by a trigger's handler, the job runs right after the triggers of the write being
    /// handled, before any other queued job (see ``TriggerState``).
    @discardableResult
    package func perform(_ job: @escaping @Sendable () -> Void) -> Bool {
        guard !self.isClosed else { return false }
        if self.loop.inLoop, let depth = self.triggers.handlerDepth {
            self.triggers.enqueue(job, depth: depth + 1)
            return true
        }
        return self.loop.execute(job)
    }

    // MARK: - Writes

    /// Applies `write` on the loop and delivers its events, then calls `completion` (loop thread).
    func write(_ write: WriteOperation, completion: (@Sendable (DatabaseError?) -> Void)?) {
        let accepted = self.perform { [self] in self.apply(write, completion: completion) }
        if !accepted { completion?(Self.closedError) }
    }

    /// Applies `write` now, its server values resolved at `now` (the clock's time when `nil`), as
    /// the backend does it (see ``DatabaseBackend/apply(_:now:completion:applied:)``). Loop thread only.
    package func apply(
        _ write: WriteOperation, now: Int64? = nil, completion: (@Sendable (DatabaseError?) -> Void)?, applied: (() -> Void)? = nil
    ) {
        self.loop.assertOnLoop()
        self.backend.apply(write, now: now, completion: completion, applied: applied)
    }

    /// Calls the followers of every applied write (see ``LoopAccess/followChanges(_:)``) with
    /// `write` and the tree after it. Loop thread only.
    func followersChanged(by write: WriteOperation, root: @autoclosure () -> Node) {
        guard !self.changeListeners.isEmpty else { return }
        let root = root()
        for listener in self.changeListeners { listener.change(write, root) }
    }

    /// Hands what the engine's last write replaced to the loop, which releases it with its
    /// finished jobs: it was most often allocated by the thread that wrote it, which then frees it
    /// when it writes again (loop thread).
    func releaseReplaced() {
        let replaced = self.engine.takeReplaced()
        if !replaced.isEmpty { self.loop.releaseWithFinishedJobs(replaced) }
    }

    /// Puts the tree back to `root` after the journal failed the writes made since (loop thread):
    /// observers get the events of going back; nothing is journaled.
    private func undo(to root: Node) {
        self.loop.assertOnLoop()
        guard let events = try? self.engine.apply(.set(.root, WriteValue(node: root)), now: self.clock()) else { return }
        self.deliver(events)
        self.deliverViewChanges()
        self.deliverAggregateChanges()
        self.followersChanged(by: .set(.root, WriteValue(node: root)), root: root)
    }

    /// Loop thread only.
    func addChangeListener(_ change: @escaping (WriteOperation, Node) -> Void) -> ChangeSubscription {
        self.loop.assertOnLoop()
        let id = self.nextChangeListener
        self.nextChangeListener += 1
        self.changeListeners.append((id, change))
        return ChangeSubscription(id: id, core: self)
    }

    /// Loop thread only.
    func removeChangeListener(_ id: UInt64) {
        self.loop.assertOnLoop()
        self.changeListeners.removeAll { $0.id == id }
    }

    /// Calls the engine's view listeners with the changes of the write just applied (loop thread).
    /// A listener removed by an earlier one in this loop gets nothing more.
    func deliverViewChanges() {
        for change in self.engine.takeViewChanges() where self.engine.isListening(change.listener) {
            change.deliver()
        }
    }

    // MARK: - Observers

    func makeHandle() -> DatabaseHandle { self.nextHandle.wrappingAdd(1, ordering: .relaxed).oldValue }

    /// Registers `box` for `type` at the query's location; initial events follow on the loop.
    func observe(_ type: DataEventType, box: ObserverBox) {
        let registration = EventRegistration(id: UInt64(box.handle), type: type.engineType, payload: box)
        self.registrations.withLock { $0[box.handle] = registration }
        let query = box.query
        let accepted = self.perform { [self] in
            guard registration.isActive else { return }
            if let error = query.constraintError {
                self.end(registration, error: error)
                return
            }
            if box.watchesMetadata { self.metadataWatchers.add(registration, box: box) }
            self.register(registration, query: query)
        }
        if !accepted {
            self.registrations.withLock { _ = $0.removeValue(forKey: box.handle) }
            let cancel = LoopCallback(box.cancel)
            // Closed: nothing will run on the loop any more, so tell the caller here.
            cancel.value?(Self.closedError)
        }
    }

    /// Removes the observer `handle` if it belongs to `query` (any query at its location when
    /// `query` is a reference); it gets nothing more, even if this is called from another thread.
    func removeObserver(_ handle: DatabaseHandle, matching query: DatabaseQuery) {
        let registration: EventRegistration? = self.registrations.withLock { table in
            guard let registration = table[handle], let box = registration.payload as? ObserverBox,
                Self.matches(box.query, query)
            else { return nil }
            table[handle] = nil
            return registration
        }
        guard let registration else { return }
        registration.deactivate()
        self.awaitDeliveries(to: [handle])
        self.perform { [self] in self.unregister(registration) }
    }

    /// Removes every observer at exactly the query's location (of that query, for a query).
    func removeAllObservers(matching query: DatabaseQuery) {
        let removed: [EventRegistration] = self.registrations.withLock { table in
            let found = table.filter { entry in
                guard let box = entry.value.payload as? ObserverBox else { return false }
                return Self.matches(box.query, query)
            }
            for handle in found.keys { table[handle] = nil }
            return Array(found.values)
        }
        for registration in removed { registration.deactivate() }
        guard !removed.isEmpty else { return }
        self.awaitDeliveries(to: Set(removed.map { DatabaseHandle($0.id) }))
        self.perform { [self] in
            for registration in removed { self.unregister(registration) }
        }
    }

    /// Whether an observer registered on `registered` is addressed by `target`.
    private static func matches(_ registered: DatabaseQuery, _ target: DatabaseQuery) -> Bool {
        guard registered.path == target.path else { return false }
        return target is DatabaseReference || registered.params == target.params
    }

    /// Ends a registration for a reason other than removal, calling its cancel block.
    func end(_ registration: EventRegistration, error: DatabaseError) {
        self.loop.assertOnLoop()
        guard let box = registration.payload as? ObserverBox else { return }
        self.registrations.withLock { _ = $0.removeValue(forKey: box.handle) }
        self.unregister(registration)
        box.cancel?(error)
    }

    /// Delivers events in order on the loop thread, skipping observers removed meanwhile.
    func deliver(_ events: [Event]) {
        self.loop.assertOnLoop()
        let outer = self.delivering.load(ordering: .relaxed)
        defer { self.delivering.store(outer, ordering: .releasing) }
        for event in events {
            let registration = event.registration
            // Every payload is an `ObserverBox` (created in `observe`).
            let box = unsafeDowncast(registration.payload, to: ObserverBox.self)
            // Announce the call before checking that the observer is still there; a removal
            // deactivates before looking at `delivering` (both behind a sequentially consistent
            // fence), so either this sees it removed or the removal waits for the block.
            self.delivering.store(box.handle, ordering: .relaxed)
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            guard registration.isActive else { continue }
            if box.once {
                registration.deactivate()
                self.registrations.withLock { _ = $0.removeValue(forKey: box.handle) }
                self.unregister(registration)
            }
            let metadata = self.metadata(at: event.path)
            if box.watchesMetadata { self.metadataWatchers.delivered(metadata, to: box.handle) }
            let snapshot = DataSnapshot(
                node: event.node, path: event.path, index: event.index, database: box.query.database, metadata: metadata)
            box.block(snapshot, event.previousKey)
        }
    }

    /// After deactivating the observers `handles` on another thread: waits until no block of
    /// theirs is running on the loop thread, so none is called once the removal returns. On the
    /// loop thread (inside a callback) there is nothing to wait for: the loop is here.
    func awaitDeliveries(to handles: Set<DatabaseHandle>) {
        guard !self.loop.inLoop else { return }
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        var spins = 0
        while handles.contains(self.delivering.load(ordering: .acquiring)) {
            spins += 1
            if spins < 64 { sched_yield() } else { usleep(50) }
        }
    }

    // MARK: - Reads

    /// Calls `body` on the loop thread with the engine; `false` when closed.
    @discardableResult
    func read(_ body: @escaping @Sendable (SyncEngine) -> Void) -> Bool {
        self.perform { [self] in body(self.engine) }
    }

    /// The engine that holds `path`: the `.info` tree's for `.info` paths, else the data's.
    /// Loop thread only.
    package func engine(for path: DatabasePath) -> SyncEngine {
        path.isInfo ? self.infoEngine : self.engine
    }

    // MARK: - Closing

    /// Cancels every observer (their cancel blocks get a `.closed` error), stops the loop and
    /// waits for it. Idempotent.
    func close() {
        guard !self.closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let cancelObservers: @Sendable () -> Void = { [self] in
            let error = DatabaseError(.closed, "The database was closed.")
            self.backend.close()
            for registration in self.engine.allRegistrations + self.infoEngine.allRegistrations where registration.isActive {
                self.end(registration, error: error)
            }
            // Triggers hold their database: let it go.
            for entry in self.triggers.tree.removeAll() { entry.removed.store(true, ordering: .releasing) }
            self.endAggregates(error: error)
        }
        // After a signal stopped `run()`, the loop no longer takes jobs and nothing else touches
        // the engine: cancel on this thread.
        if !self.loop.execute(cancelObservers) { cancelObservers() }
        if let store = self.store {
            // Runs after every write queued before closing: they are journaled, synced and completed.
            if !self.loop.execute({ store.close() }) { store.close() }
        }
        _ = self.loop.shutdown()
        // Only now, with the loop and any checkpoint finished, may another process open the files.
        self.store?.close()
        self.store?.releaseLock()
    }
}

extension DataEventType {
    var engineType: EventType {
        switch self {
        case .childAdded: return .childAdded
        case .childRemoved: return .childRemoved
        case .childChanged: return .childChanged
        case .childMoved: return .childMoved
        case .value: return .value
        }
    }
}
