import Canopy
import CanopyCore
import CanopyLoop

/// A local write the server has not acknowledged yet (remote database; loop thread only).
///
/// It keeps both forms: the write as made, with its server values (what the server is sent), and
/// the nodes it resolved to locally (what the local cache shows until the server answers).
final class PendingWrite {
    /// Orders the queue; also the key of its persisted copy.
    let id: UInt64
    let write: WriteOperation
    /// The write's entries with server values resolved locally (estimated server time).
    let resolved: [(path: [ChildKey], node: Node)]
    /// A transaction's write carries the hash of the data it was computed from.
    let hash: String?
    /// A multi-location transaction's commit carries the locations it read and the hash of the data
    /// it saw at each: the server applies it only if they are unchanged.
    var readHashes: [(path: DatabasePath, hash: String)] = []
    /// Taken (set to `nil`) when it is called: by the answer, or by the acknowledgement timeout.
    var completion: (@Sendable (DatabaseError?) -> Void)?
    /// Fires ``completion`` if the server has not answered in time (`acknowledgementTimeout`).
    var timeout: LoopTimer?
    /// Its entry in the database's pending-write tracker (snapshot metadata), while it is pending.
    var token: PendingWrites.Token?

    init(
        id: UInt64, write: WriteOperation, resolved: [(path: [ChildKey], node: Node)], hash: String?,
        completion: (@Sendable (DatabaseError?) -> Void)?
    ) {
        self.id = id
        self.write = write
        self.resolved = resolved
        self.hash = hash
        self.completion = completion
    }

    /// The locations the write replaces (its entries' paths; a priority entry's node for a priority).
    var locations: [DatabasePath] {
        self.write.entries.map { entry in
            let keys = entry.isPriority ? Array(entry.path.dropLast()) : entry.path
            return DatabasePath(self.write.path.keys + keys)
        }
    }

    /// Whether the write gives `path` a whole value: one of its entries (not a priority) sets
    /// `path` or a location above it. As in the SDKs, the location is then complete in the cache,
    /// whatever the server has sent.
    func completes(_ path: DatabasePath) -> Bool {
        self.write.entries.contains { entry in
            !entry.isPriority && DatabasePath(self.write.path.keys + entry.path).contains(path)
        }
    }

    /// Whether the write changes anything at, above or below `path`.
    func overlaps(_ path: DatabasePath) -> Bool {
        guard path.contains(self.write.path) || self.write.path.contains(path) else { return false }
        guard self.write.entries.count > 1 else { return true }
        return self.locations.contains { $0.contains(path) || path.contains($0) }
    }

    /// Applies the locally resolved write to `root`.
    func apply(to root: inout Node) {
        let base = self.write.path.keys
        for (path, node) in self.resolved where !(path.last?.isPriorityKey ?? false) {
            root.set(node, at: (base + path)[...])
        }
        for (path, node) in self.resolved where path.last?.isPriorityKey ?? false {
            guard !root.node(at: base + path.dropLast()).isEmpty else { continue }
            root.set(node, at: (base + path)[...])
        }
    }

    /// The write with its server values resolved (what the local cache applies).
    var resolvedOperation: WriteOperation {
        WriteOperation(
            path: self.write.path, entries: self.resolved.map { .init(path: $0.path, value: WriteValue(node: $0.node)) },
            requiresExistingNode: self.write.requiresExistingNode)
    }
}
