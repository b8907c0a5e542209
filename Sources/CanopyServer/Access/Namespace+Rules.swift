import Canopy
import CanopyCluster
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
        } else if let cluster = self.cluster {
            do throws(DatabaseError) {
                try await cluster.store.setRules(rules.source, under: cluster.lease)
            } catch {
                throw RESTError(error)
            }
        }
        self.rules.withLock { $0 = rules }
        let hub = self.hub
        try await self.database.loop { access in
            hub.revoke(access: access) { subscriber, subscription in
                !self.mayRead(subscription.topic.location, query: subscription.topic.query, identity: subscriber.identity, access: access)
            }
        }
    }
}
