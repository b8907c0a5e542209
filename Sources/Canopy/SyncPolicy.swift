/// When a write to a database opened at a path counts as done: what its completion promises.
///
/// | Policy | Completion fires | After a process crash | After a power cut |
/// |---|---|---|---|
/// | ``always`` | after `fsync` (shared by concurrent writers) | kept | kept |
/// | ``periodic(_:)`` | after `write(2)` to the OS | kept | up to one interval lost |
/// | ``never`` | after `write(2)` to the OS | kept | whatever the OS had flushed |
///
/// Observers always fire as soon as a write is applied in memory, before it is durable; until it
/// is, their snapshots have ``SnapshotMetadata/hasPendingWrites`` set (see ``DataSnapshot/metadata``).
public enum SyncPolicy: Sendable, Equatable, CustomStringConvertible {
    /// Every completion waits for `fsync`. Writes issued while an `fsync` runs share the next one
    /// (group commit). The default.
    case always
    /// Completions fire once the write reached the operating system; `fsync` runs at most once per
    /// interval while there are unsynced writes.
    case periodic(Duration)
    /// Completions fire once the write reached the operating system; Canopy never calls `fsync`
    /// while running (closing still syncs).
    case never

    public var description: String {
        switch self {
        case .always: return "always"
        case .periodic(let interval): return "periodic(\(interval))"
        case .never: return "never"
        }
    }
}
