import Canopy
import CanopyCore
import CanopyWire

/// A write as a client asked for it, with what it depends on: the one description every write
/// path (REST, SDK WebSocket and long polling, onDisconnect) hands to ``Namespace/submit(_:done:)``,
/// which applies it here or, at a follower, forwards it to the namespace's leader.
struct ClientWrite: Sendable {
    /// What the write is conditional on at its location.
    enum Condition: Sendable, Equatable {
        case none
        /// REST `if-match`: the location's ``ETag``.
        case etag(String)
        /// An SDK transaction's put: the location's wire hash.
        case hash(String)
    }

    var write: WriteOperation
    var identity: Identity
    var condition: Condition = .none
    /// A multi-location transaction's reads: each location's wire hash when it was read. Each
    /// must be readable by the client and unchanged, else nothing is written.
    var reads: [(path: DatabasePath, hash: String)] = []
    /// Whether the outcome carries the data at the write's location right after it.
    var wantsNode = false
    /// In a cluster: the onDisconnect registration this write carries out (deleted in the
    /// transaction that appends it, so that it runs once).
    var registration: Int64?
}

/// What became of a ``ClientWrite``.
enum ClientWriteOutcome: Sendable {
    /// Applied and durable: `sequence` is its position in the namespace's log (in a cluster);
    /// `node` the data at its location right after it, when asked for.
    case written(sequence: Int64?, node: Node?)
    /// The rules refused it (or one of its reads).
    case denied
    /// A transaction's hash, or one of its reads' hashes, no longer matches.
    case stale
    /// The `if-match` ETag no longer matches: the location's ETag now, and its data when the
    /// client may read it.
    case changed(etag: String, current: Node?)
    /// It failed: invalid, or the database or the cluster failed.
    case failed(DatabaseError)
}

extension ClientWrite {
    /// The decision on the loop: refused with an outcome, or the write to apply (as the rules
    /// leave it). Reads and the decision are one step with the write that follows.
    func decide(on namespace: Namespace, access: LoopAccess) -> Result<WriteOperation, ClientWriteOutcomeRefusal> {
        // A location the client may not read is refused before its hash is compared (no probing).
        for read in self.reads where !namespace.mayRead(read.path, query: nil, identity: self.identity, access: access) {
            return .failure(ClientWriteOutcomeRefusal(.denied))
        }
        // Rules first: a refused writer learns nothing of the data, not even that it changed.
        guard let write = namespace.permitted(self.write, identity: self.identity, access: access) else {
            return .failure(ClientWriteOutcomeRefusal(.denied))
        }
        if self.reads.contains(where: { access.node(at: $0.path).wireHash != $0.hash }) {
            return .failure(ClientWriteOutcomeRefusal(.stale))
        }
        switch self.condition {
        case .none:
            break
        case .hash(let expected):
            if access.node(at: write.path).wireHash != expected { return .failure(ClientWriteOutcomeRefusal(.stale)) }
        case .etag(let expected):
            let current = access.node(at: write.path)
            let etag = ETag.of(current)
            if etag != expected {
                let readable = namespace.mayRead(write.path, query: nil, identity: self.identity, access: access)
                return .failure(ClientWriteOutcomeRefusal(.changed(etag: etag, current: readable ? current : nil)))
            }
        }
        return .success(write)
    }
}

/// A refusal decided on the loop (an `Error` only so that it travels in a `Result`).
struct ClientWriteOutcomeRefusal: Error {
    let outcome: ClientWriteOutcome
    init(_ outcome: ClientWriteOutcome) { self.outcome = outcome }
}
