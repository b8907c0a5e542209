import CanopyCore

/// The `.value` observers that asked for metadata changes, with the metadata each got last: the
/// only observers a write's end (or ``DatabaseCore/metadataChanged(at:)``) looks at, so writes cost
/// nothing more for the others. Loop-thread only.
struct MetadataWatchers {
    struct Watcher {
        let registration: EventRegistration
        let box: ObserverBox
        /// What its last event carried; `nil` before its first event.
        var last: SnapshotMetadata?
    }

    private var table: [DatabaseHandle: Watcher] = [:]

    var isEmpty: Bool { self.table.isEmpty }

    mutating func add(_ registration: EventRegistration, box: ObserverBox) {
        self.table[box.handle] = Watcher(registration: registration, box: box, last: nil)
    }

    mutating func remove(_ handle: DatabaseHandle) {
        self.table[handle] = nil
    }

    /// Notes that the observer `handle` got an event with `metadata`. O(1).
    mutating func delivered(_ metadata: SnapshotMetadata, to handle: DatabaseHandle) {
        self.table[handle]?.last = metadata
    }

    /// The active watchers that already got an event, at, above or below one of `paths`.
    ///
    /// - Complexity: O(*w* · *p* · *d*) for *w* watchers, *p* paths at depth *d*.
    func overlapping(_ paths: [DatabasePath]) -> [Watcher] {
        self.table.values.filter { watcher in
            guard watcher.last != nil, watcher.registration.isActive else { return false }
            let location = watcher.box.query.path
            return paths.contains { $0.contains(location) || location.contains($0) }
        }
    }
}
