import Canopy
import CanopyCore
import Synchronization

/// The one place every way in (REST, event streams, the SDKs' WebSocket) asks the rules.
extension Namespace {
    /// Whether `identity` may read `path`, with `query` for a filtered query (loop thread). The
    /// administrator and `/.info/` are never refused.
    /// - Complexity: O(*d*) rule evaluations for a path of depth *d*.
    func mayRead(_ path: DatabasePath, query: QueryParams?, identity: Identity, access: LoopAccess) -> Bool {
        if identity.isAdmin || path.isInfo { return true }
        return self.rules.withLock { $0 }.mayRead(path, query: query, auth: identity.auth, access: access)
    }

    /// Whether the rules declare the `.indexOn` Firebase needs for `query` at `path`
    /// (``NamespaceRules/declaresIndex(for:at:)``).
    func declaresIndex(for query: QueryParams, at path: DatabasePath) -> Bool {
        self.rules.withLock { $0 }.declaresIndex(for: query, at: path)
    }

    /// `write` as it may be applied for `identity`, or `nil` when the rules refuse it (loop
    /// thread; see ``NamespaceRules/permitted(_:auth:access:)``). The administrator's writes are
    /// not judged.
    func permitted(_ write: WriteOperation, identity: Identity, access: LoopAccess) -> WriteOperation? {
        if identity.isAdmin { return write }
        return self.rules.withLock { $0 }.permitted(write, auth: identity.auth, access: access)
    }
}
