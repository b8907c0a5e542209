import CanopyCore

extension DatabaseQuery {
    /// Observes `eventType` at this location or query.
    ///
    /// The block runs on the database's loop thread: first with the initial data (one
    /// `.childAdded` per existing child in order, or the current `.value`, `null` included), then
    /// after every write that changes what this query shows.
    ///
    /// - Returns: A handle for ``removeObserver(withHandle:)``.
    ///
    /// - Complexity: O(*d* log *n*) on the loop to register at depth *d*. The first observer of a query
    ///   builds its view, which later observers of the same query share: O(*n* log *n*) to index the *n*
    ///   children when the order is by value, by child or by priority with prioritized children (key order
    ///   needs no index; an index of the same order is shared too), and O(log *n* + *w* log *w*) for a query
    ///   window of *w* children. The initial `.childAdded` events cost O(*d*) each, one per child shown. Then
    ///   each write that changes *k* children here costs O(*k* log *n*), whatever the window's size.
    @discardableResult
    public func observe(_ eventType: DataEventType, with block: @escaping (DataSnapshot) -> Void) -> DatabaseHandle {
        self.register(eventType, once: false, block: { snapshot, _ in block(snapshot) }, cancel: nil)
    }

    /// Observes `eventType`; `cancelBlock` runs (on the loop thread) if the observation ends for a
    /// reason other than removal: an invalid query, or the database closing.
    ///
    /// - Complexity: As ``observe(_:with:)``: O(*d* log *n*) to register, plus building the query's view once
    ///   (O(*n* log *n*) for an index), then O(*k* log *n*) per write that changes *k* children.
    @discardableResult
    public func observe(
        _ eventType: DataEventType, with block: @escaping (DataSnapshot) -> Void, withCancel cancelBlock: ((any Error) -> Void)?
    ) -> DatabaseHandle {
        self.register(eventType, once: false, block: { snapshot, _ in block(snapshot) }, cancel: cancelBlock)
    }

    /// Observes `eventType`, also passing the key of the previous child in this query's order
    /// (`nil` for the first child, and for `.childRemoved` and `.value`).
    ///
    /// - Complexity: As ``observe(_:with:)``: O(*d* log *n*) to register, plus building the query's view once
    ///   (O(*n* log *n*) for an index), then O(*k* log *n*) per write that changes *k* children.
    @discardableResult
    public func observe(_ eventType: DataEventType, andPreviousSiblingKeyWith block: @escaping (DataSnapshot, String?) -> Void)
        -> DatabaseHandle
    {
        self.register(eventType, once: false, block: block, cancel: nil)
    }

    /// Observes `eventType` with previous sibling keys and a cancel block.
    ///
    /// - Complexity: As ``observe(_:with:)``: O(*d* log *n*) to register, plus building the query's view once
    ///   (O(*n* log *n*) for an index), then O(*k* log *n*) per write that changes *k* children.
    @discardableResult
    public func observe(
        _ eventType: DataEventType,
        andPreviousSiblingKeyWith block: @escaping (DataSnapshot, String?) -> Void,
        withCancel cancelBlock: ((any Error) -> Void)?
    ) -> DatabaseHandle {
        self.register(eventType, once: false, block: block, cancel: cancelBlock)
    }

    /// Calls `block` once, with the first event of `eventType` (for `.value`, the current data),
    /// then removes the observer. The block runs on the loop thread.
    ///
    /// - Complexity: As ``observe(_:with:)``: O(*d* log *n*) to register, plus building the query's view when
    ///   no observer shares it (O(*n* log *n*) for an index), which goes away with the observer after its
    ///   event.
    public func observeSingleEvent(of eventType: DataEventType, with block: @escaping (DataSnapshot) -> Void) {
        _ = self.register(eventType, once: true, block: { snapshot, _ in block(snapshot) }, cancel: nil)
    }

    /// ``observeSingleEvent(of:with:)`` with a cancel block.
    ///
    /// - Complexity: As ``observe(_:with:)``: O(*d* log *n*) to register, plus building the query's view when
    ///   no observer shares it (O(*n* log *n*) for an index), which goes away with the observer after its
    ///   event.
    public func observeSingleEvent(
        of eventType: DataEventType, with block: @escaping (DataSnapshot) -> Void, withCancel cancelBlock: ((any Error) -> Void)?
    ) {
        _ = self.register(eventType, once: true, block: { snapshot, _ in block(snapshot) }, cancel: cancelBlock)
    }

    /// ``observeSingleEvent(of:with:)`` passing the previous sibling key.
    ///
    /// - Complexity: As ``observe(_:with:)``: O(*d* log *n*) to register, plus building the query's view when
    ///   no observer shares it (O(*n* log *n*) for an index), which goes away with the observer after its
    ///   event.
    public func observeSingleEvent(of eventType: DataEventType, andPreviousSiblingKeyWith block: @escaping (DataSnapshot, String?) -> Void)
    {
        _ = self.register(eventType, once: true, block: block, cancel: nil)
    }

    /// ``observeSingleEvent(of:andPreviousSiblingKeyWith:)`` with a cancel block.
    ///
    /// - Complexity: As ``observe(_:with:)``: O(*d* log *n*) to register, plus building the query's view when
    ///   no observer shares it (O(*n* log *n*) for an index), which goes away with the observer after its
    ///   event.
    public func observeSingleEvent(
        of eventType: DataEventType,
        andPreviousSiblingKeyWith block: @escaping (DataSnapshot, String?) -> Void,
        withCancel cancelBlock: ((any Error) -> Void)?
    ) {
        _ = self.register(eventType, once: true, block: block, cancel: cancelBlock)
    }

    /// Removes the observer with `handle`. On a reference this finds it among every query at the
    /// same location; on a query, only among that query's observers. Unknown handles are ignored.
    /// Once this returns, the observer receives nothing more: called on another thread while its
    /// block runs on the loop thread, this waits for the block to return (so the block must not
    /// wait for this thread); inside a callback it returns at once.
    ///
    /// - Complexity: O(*v*) on the loop for *v* observers of the same query, plus O(*d*) to drop the query's
    ///   view (and its index) with its last observer.
    public func removeObserver(withHandle handle: DatabaseHandle) {
        self.core.removeObserver(handle, matching: self)
    }

    /// Removes every observer at exactly this location (on a query: of this query). Observers of
    /// child locations stay. Once this returns they receive nothing more, as with
    /// ``removeObserver(withHandle:)``.
    ///
    /// - Complexity: O(*R*) for *R* observers in the whole database (each is checked against this query),
    ///   plus O(*v*) on the loop for the *v* removed.
    public func removeAllObservers() {
        self.core.removeAllObservers(matching: self)
    }

    /// On a database connected to a server (`Database(url:)`), `keepSynced(true)`
    /// keeps the location listened to, so its cached data stays current with no observer (and, with a
    /// persistent cache, is there after a restart); `false` stops that.
    ///
    /// Every location of an embedded database is always available; `keepSynced(true)` keeps this
    /// query's index alive without observers, so one-shot reads of an ordered query cost
    /// O(log *n* + *k*) instead of sorting the children each time. `false` releases it.
    ///
    /// - Complexity: O(*d* log *n*) on the loop; `true` also builds the index of the query's order in
    ///   O(*n* log *n*) when none is live (key order needs none).
    public func keepSynced(_ keepSynced: Bool) {
        guard self.constraintError == nil else { return }
        let path = self.path
        let params = self.params
        let core = self.core
        self.core.read { engine in
            engine.setPinned(keepSynced, at: path, params: params)
            core.backend.setKeepSynced(keepSynced, at: path, params: params)
        }
    }

    /// Registers an observer; `includeMetadataChanges` matters for `.value` only (see
    /// ``observe(_:includeMetadataChanges:with:)``).
    func register(
        _ type: DataEventType, once: Bool, block: @escaping (DataSnapshot, String?) -> Void, cancel: ((any Error) -> Void)?,
        includeMetadataChanges: Bool = false
    ) -> DatabaseHandle {
        let box = ObserverBox(
            handle: self.core.makeHandle(), query: self, once: once, block: block, cancel: cancel,
            watchesMetadata: includeMetadataChanges && type == .value && !once)
        self.core.observe(type, box: box)
        return box.handle
    }
}
