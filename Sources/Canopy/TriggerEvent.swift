import CanopyCore
import Synchronization

/// Which changes a trigger runs for (Cloud Functions' `onValueWritten`, `onValueCreated`,
/// `onValueUpdated`, `onValueDeleted`).
public enum TriggerKind: Sendable, Equatable {
    /// Any change: data created, changed or deleted.
    case written
    /// Data where there was none.
    case created
    /// Data changed, and there is data before and after.
    case updated
    /// Data removed: there was data and there is none.
    case deleted

    /// Whether a change from `before` to `after` (which differ) is of this kind.
    func accepts(before: Bool, after: Bool) -> Bool {
        switch self {
        case .written: return true
        case .created: return !before && after
        case .updated: return before && after
        case .deleted: return before && !after
        }
    }
}

/// What a trigger receives: the data at the matched location just before and just after the write
/// it reacts to, and the values of the pattern's wildcards.
///
/// ```swift
/// db.onValueCreated("/restaurants/{restId}/ratings/{ratingId}") { event in
///     let restaurant = event.params["restId"]!
///     let rating = event.after.childSnapshot(forPath: "rating").value as? Double ?? 0
///     …
/// }
/// ```
public struct TriggerEvent: Sendable {
    /// The data at ``ref`` before the write (does not exist for ``TriggerKind/created``).
    public let before: DataSnapshot
    /// The data at ``ref`` after the write, as of that write (later writes do not change it; does not
    /// exist for ``TriggerKind/deleted``).
    public let after: DataSnapshot
    /// The key each `{name}` wildcard of the pattern matched.
    public let params: [String: String]
    /// How many triggers deep the write is: 0 for a write no trigger made, 1 for a write a trigger
    /// made in reaction to such a write, and so on.
    public let depth: Int

    /// The matched location.
    public var ref: DatabaseReference { self.after.ref }

    /// Whether this change created, updated or deleted the data at ``ref``.
    public var kind: TriggerKind {
        switch (self.before.exists(), self.after.exists()) {
        case (false, _): return .created
        case (_, false): return .deleted
        default: return .updated
        }
    }
}

/// A registered trigger; ``remove()`` ends it.
public final class TriggerRegistration: Sendable {
    let entry: TriggerEntry
    weak let core: DatabaseCore?

    init(entry: TriggerEntry, core: DatabaseCore) {
        self.entry = entry
        self.core = core
    }

    /// The pattern the trigger was registered with.
    public var pattern: String { self.entry.pattern.string }

    /// Removes the trigger (from any thread, also from inside a trigger): its handler is not called
    /// again, not even for a write whose triggers are being run. Idempotent.
    public func remove() {
        guard !self.entry.removed.exchange(true, ordering: .acquiringAndReleasing), let core = self.core else { return }
        let entry = self.entry
        core.perform { [core] in core.triggers.tree.remove(entry) }
    }
}
