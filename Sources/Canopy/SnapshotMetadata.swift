/// Where a snapshot's data stands (Firestore's `SnapshotMetadata`): whether it includes local
/// writes not yet confirmed, and whether it came from a local cache rather than the server.
///
/// Every ``DataSnapshot`` carries one: those of events, of ``DatabaseQuery/getData()``, of
/// ``DatabaseQuery/observeSingleEvent(of:with:)`` and of ``DatabaseQuery/values(includeMetadataChanges:)``.
/// Observe with `includeMetadataChanges: true` (``DatabaseQuery/observe(_:includeMetadataChanges:with:)``)
/// to get an extra `.value` event, with the same data, when only the metadata changes. See
/// <doc:MetadataAndPendingWrites>.
public struct SnapshotMetadata: Sendable, Equatable, CustomStringConvertible {
    /// Whether the snapshot includes writes not yet confirmed: for a database opened at a path, a
    /// write applied (its events raised) but not yet durable under the ``SyncPolicy``; for a
    /// database connected to a server, a local write the server has not acknowledged yet. It is
    /// `true` when such a write is at, above or below the snapshot's location. Always `false` in
    /// memory.
    public let hasPendingWrites: Bool
    /// Whether the data came from the local cache, not (yet) from the server. Always `false` for an
    /// embedded database, whose data is its own.
    public let isFromCache: Bool

    public init(hasPendingWrites: Bool, isFromCache: Bool) {
        self.hasPendingWrites = hasPendingWrites
        self.isFromCache = isFromCache
    }

    /// Neither pending writes nor from the cache: confirmed data.
    static let settled = SnapshotMetadata(hasPendingWrites: false, isFromCache: false)

    public var description: String {
        "SnapshotMetadata(hasPendingWrites: \(self.hasPendingWrites), isFromCache: \(self.isFromCache))"
    }
}
