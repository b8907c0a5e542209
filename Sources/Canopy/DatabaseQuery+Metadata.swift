extension DatabaseQuery {
    /// Observes `eventType` like ``observe(_:with:)``; with `includeMetadataChanges`, a `.value`
    /// observer also gets the same value again each time only the snapshot's
    /// ``DataSnapshot/metadata`` changes: a pending write here (at, above or below this location)
    /// became durable or was acknowledged by the server, or the data stopped coming from the cache.
    ///
    /// Only `.value` observers get these metadata-only events: a child event says that a child was
    /// added, changed, moved or removed, and none was. Child events still carry their metadata.
    ///
    /// ```swift
    /// ref.observe(.value, includeMetadataChanges: true) { snapshot in
    ///     render(snapshot.value, saving: snapshot.metadata.hasPendingWrites)
    /// }
    /// ```
    ///
    /// - Returns: A handle for ``removeObserver(withHandle:)``.
    ///
    /// - Complexity: As ``observe(_:with:)``. Each confirmed write then costs O(*w* · *d*) for the *w*
    ///   observers that asked for metadata changes (the others cost nothing), plus reading the value again
    ///   for those whose metadata changed.
    @discardableResult
    public func observe(_ eventType: DataEventType, includeMetadataChanges: Bool, with block: @escaping (DataSnapshot) -> Void)
        -> DatabaseHandle
    {
        self.register(
            eventType, once: false, block: { snapshot, _ in block(snapshot) }, cancel: nil, includeMetadataChanges: includeMetadataChanges)
    }

    /// ``observe(_:includeMetadataChanges:with:)`` with a cancel block (see ``observe(_:with:withCancel:)``).
    ///
    /// - Complexity: As ``observe(_:includeMetadataChanges:with:)``.
    @discardableResult
    public func observe(
        _ eventType: DataEventType, includeMetadataChanges: Bool, with block: @escaping (DataSnapshot) -> Void,
        withCancel cancelBlock: ((any Error) -> Void)?
    ) -> DatabaseHandle {
        self.register(
            eventType, once: false, block: { snapshot, _ in block(snapshot) }, cancel: cancelBlock,
            includeMetadataChanges: includeMetadataChanges)
    }

    /// ``observe(_:includeMetadataChanges:with:)`` passing the previous sibling key (see
    /// ``observe(_:andPreviousSiblingKeyWith:)``).
    ///
    /// - Complexity: As ``observe(_:includeMetadataChanges:with:)``.
    @discardableResult
    public func observe(
        _ eventType: DataEventType, includeMetadataChanges: Bool, andPreviousSiblingKeyWith block: @escaping (DataSnapshot, String?) -> Void
    ) -> DatabaseHandle {
        self.register(eventType, once: false, block: block, cancel: nil, includeMetadataChanges: includeMetadataChanges)
    }

    /// ``observe(_:includeMetadataChanges:andPreviousSiblingKeyWith:)`` with a cancel block.
    ///
    /// - Complexity: As ``observe(_:includeMetadataChanges:with:)``.
    @discardableResult
    public func observe(
        _ eventType: DataEventType, includeMetadataChanges: Bool,
        andPreviousSiblingKeyWith block: @escaping (DataSnapshot, String?) -> Void,
        withCancel cancelBlock: ((any Error) -> Void)?
    ) -> DatabaseHandle {
        self.register(eventType, once: false, block: block, cancel: cancelBlock, includeMetadataChanges: includeMetadataChanges)
    }
}
