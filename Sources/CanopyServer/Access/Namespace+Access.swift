import Canopy
import CanopyCore
import CanopyRules
import HTTPTypes
import Synchronization

/// The one place every way in (REST, event streams, the SDKs' WebSocket) asks the rules.
extension Namespace {
    /// Whether `identity` may read `path`, with `query` for a query (loop thread). The
    /// administrator and `/.info/` are never refused.
    /// - Complexity: O(*d*) rule evaluations for a path of depth *d*.
    func mayRead(_ path: DatabasePath, query: QueryParams?, identity: Identity, access: LoopAccess) -> Bool {
        if identity.isAdmin || path.isInfo { return true }
        let engine = self.rules.withLock { $0.engine }
        return engine.canRead(
            path: path, auth: identity.auth, root: access.root, query: query.map(QueryDescription.init), now: access.now()
        ).isAllowed
    }

    /// `write` as it may be applied for `identity` (its server values resolved, so that the rules
    /// judged what is stored), or `nil` when the rules refuse it (loop thread: judging and
    /// applying are one step, so nothing comes between). The administrator's writes are not
    /// judged.
    /// - Complexity: as ``CanopyRules/RulesEngine/canWrite(changes:auth:root:now:)``: the rules on
    ///   the written paths and the locations of the written data that `.validate` rules match.
    func permitted(_ write: WriteOperation, identity: Identity, access: LoopAccess) -> WriteOperation? {
        if identity.isAdmin { return write }
        let engine = self.rules.withLock { $0.engine }
        let root = access.root
        let now = access.now()
        let resolved = write.resolved(root: root, now: now)
        let verdict = engine.canWrite(changes: resolved.ruleChanges(root: root), auth: identity.auth, root: root, now: now)
        return verdict.isAllowed ? resolved : nil
    }
}
