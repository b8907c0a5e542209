import Canopy
import CanopyCore
import HTTPTypes
import Synchronization

extension Namespace {
    /// Puts `rules` in force: kept durably first (a failure changes nothing), then used by every
    /// request judged after it; then, on the loop, every event stream and SDK listen they no
    /// longer allow is cancelled (streams get `cancel`, SDK connections `c`).
    func replaceRules(with rules: NamespaceRules) async throws(RESTError) {
        if let file = self.rulesFile {
            guard FileSystem.writeDurably(Array(rules.source.utf8), to: file) else {
                throw RESTError(.serviceUnavailable, "Could not save the rules.")
            }
        }
        self.rules.withLock { $0 = rules }
        let hub = self.hub
        let wire = self.wire
        try await self.database.loop { access in
            hub.revoke(where: { !self.mayRead($0.location, query: $0.query, identity: $0.identity, access: access) }, access: access)
            wire.revoke(access: access) { session, location, query in
                !self.mayRead(location, query: query, identity: session.identity, access: access)
            }
        }
    }
}
