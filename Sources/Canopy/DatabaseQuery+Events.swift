/// One event from ``DatabaseQuery/events(_:)-(DataEventType...)``.
public struct DatabaseEvent: Sendable {
    /// What happened.
    public let type: DataEventType
    /// The child's data for child events, the whole location's (or query's) for `.value`.
    public let snapshot: DataSnapshot
    /// The key of the previous child in the query's order, for added, changed and moved children.
    public let previousSiblingKey: String?
}

extension DatabaseQuery {
    /// The events of the given types as an asynchronous sequence, starting with the initial ones.
    ///
    /// The observers are removed when the consuming loop ends or its task is cancelled. The
    /// sequence finishes with an error if the observation is cancelled (an invalid query, or the
    /// database closing).
    ///
    /// ```swift
    /// for try await event in db.reference(withPath: "posts").events(.childAdded) {
    ///     print(event.snapshot.key ?? "")
    /// }
    /// ```
    ///
    /// - Complexity: As ``observe(_:with:)``, once for each event type: O(*d* log *n*) to register, plus
    ///   building the query's view once (O(*n* log *n*) for an index), then O(*k* log *n*) per write that
    ///   changes *k* children.
    public func events(_ types: DataEventType...) -> AsyncThrowingStream<DatabaseEvent, any Error> {
        self.events(types)
    }

    /// ``events(_:)-(DataEventType...)`` taking an array of types (all types when empty).
    ///
    /// - Complexity: As ``observe(_:with:)``, once for each event type: O(*d* log *n*) to register, plus
    ///   building the query's view once (O(*n* log *n*) for an index), then O(*k* log *n*) per write that
    ///   changes *k* children.
    public func events(_ types: [DataEventType]) -> AsyncThrowingStream<DatabaseEvent, any Error> {
        let types = types.isEmpty ? DataEventType.allCases : types
        return AsyncThrowingStream { continuation in
            var handles: [DatabaseHandle] = []
            for type in types {
                handles.append(
                    self.observe(
                        type,
                        andPreviousSiblingKeyWith: { snapshot, previous in
                            continuation.yield(DatabaseEvent(type: type, snapshot: snapshot, previousSiblingKey: previous))
                        },
                        withCancel: { error in continuation.finish(throwing: error) }
                    )
                )
            }
            let query = self
            let registered = handles
            continuation.onTermination = { _ in
                for handle in registered { query.removeObserver(withHandle: handle) }
            }
        }
    }

    /// The successive values of this location or query, starting with the current one.
    ///
    /// - Complexity: As ``observe(_:with:)`` for `.value`: O(*d* log *n*) to register, plus building the
    ///   query's view once (O(*n* log *n*) for an index), then O(*k* log *n*) per write that changes *k*
    ///   children.
    public func values() -> AsyncThrowingStream<DataSnapshot, any Error> {
        self.values(includeMetadataChanges: false)
    }

    /// The successive values of this location or query, starting with the current one; with
    /// `includeMetadataChanges`, also the same value again each time only its ``DataSnapshot/metadata``
    /// changes (a pending write confirmed; see ``observe(_:includeMetadataChanges:with:)``).
    ///
    /// ```swift
    /// for try await snapshot in ref.values(includeMetadataChanges: true) {
    ///     showSaving(snapshot.metadata.hasPendingWrites)
    /// }
    /// ```
    ///
    /// - Complexity: As ``values()``; each change of metadata costs as ``observe(_:includeMetadataChanges:with:)``.
    public func values(includeMetadataChanges: Bool) -> AsyncThrowingStream<DataSnapshot, any Error> {
        AsyncThrowingStream { continuation in
            let handle = self.register(
                .value, once: false, block: { snapshot, _ in continuation.yield(snapshot) }, cancel: { continuation.finish(throwing: $0) },
                includeMetadataChanges: includeMetadataChanges)
            let query = self
            continuation.onTermination = { _ in query.removeObserver(withHandle: handle) }
        }
    }
}
