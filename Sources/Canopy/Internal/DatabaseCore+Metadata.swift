import CanopyCore
import CanopyLoop

extension DatabaseCore {
    /// The metadata of a snapshot at `path` now (loop thread): pending writes from
    /// ``pendingWrites``, the cache from ``DatabaseBackend/isFromCache(_:)``.
    ///
    /// - Complexity: O(*d*) at depth *d* (O(1) with nothing pending), plus ``DatabaseBackend/isFromCache(_:)``.
    func metadata(at path: DatabasePath) -> SnapshotMetadata {
        SnapshotMetadata(hasPendingWrites: self.pendingWrites.hasPending(overlapping: path), isFromCache: self.backend.isFromCache(path))
    }

    /// Begins `write` in ``pendingWrites`` (loop thread): the completion returned ends it, which
    /// raises the metadata events it settles, then calls `completion`.
    func pendingUntilCompleted(
        _ write: WriteOperation, completion: (@Sendable (DatabaseError?) -> Void)?
    ) -> @Sendable (DatabaseError?) -> Void {
        let token = self.pendingWrites.begin(write)
        return { [self] error in
            self.pendingWrites.end(token)
            completion?(error)
        }
    }

    /// Re-checks the metadata of the observers that asked for metadata changes at, above or below
    /// `path`, and gives each whose metadata changed a `.value` event with the same data and the new
    /// metadata. For whoever changes what ``DatabaseBackend/isFromCache(_:)`` answers there (loop thread); the end of a
    /// pending write does this by itself.
    ///
    /// - Complexity: O(*w* · *d*) for *w* observers that asked for metadata changes, plus reading the
    ///   data of those that get an event.
    package func metadataChanged(at path: DatabasePath) {
        self.metadataChanged(overlapping: [path])
    }

    /// ``metadataChanged(at:)`` for the locations of a write that ended (worked out only when an
    /// observer asked for metadata changes).
    func metadataChanged(after write: WriteOperation) {
        guard !self.metadataWatchers.isEmpty else { return }
        self.metadataChanged(overlapping: PendingWrites.locations(of: write))
    }

    /// ``metadataChanged(at:)`` for several locations.
    package func metadataChanged(overlapping paths: [DatabasePath]) {
        guard !self.metadataWatchers.isEmpty, !self.isClosed else { return }
        self.loop.assertOnLoop()
        var events: [Event] = []
        for watcher in self.metadataWatchers.overlapping(paths) {
            let query = watcher.box.query
            guard self.metadata(at: query.path) != watcher.last else { continue }
            let node = self.engine.queryResult(at: query.path, params: query.params)
            events.append(
                Event(
                    registration: watcher.registration, type: .value, path: query.path, node: node, index: query.params.index,
                    previousKey: nil))
        }
        // `deliver` computes the metadata again (the same) and remembers it.
        self.deliver(events)
    }
}
