import Canopy
import CanopyCore
import CanopyWire
import NIOCore
import Synchronization

/// An SDK connection is a subscriber whose subscriptions are its listens (``WireListen``), sent
/// as data pushes.
extension WireSession: Subscriber {
    var renderer: any SubscriptionRenderer { WireRenderer.shared }

    /// Starts a listen and queues its initial data (loop thread); the same listen again sends its
    /// data again, as a fresh listen would. Nothing starts unless it returns `.added`.
    func listen(_ listen: WireListen, hub: SubscriptionHub, limit: Int, access: LoopAccess) -> SubscriptionHub.Start {
        let start = hub.subscribe(self, to: listen.subscription, limit: limit, access: access)
        if start == .added { self.listens.withLock { _ = $0.insert(listen) } }
        return start
    }

    /// Ends a listen (loop thread); a listen the connection does not have is ignored.
    func unlisten(_ listen: WireListen, hub: SubscriptionHub, access: LoopAccess) {
        let subscription = listen.subscription
        // Several listens may share a subscription: it ends with the last of them.
        let last: Bool = self.listens.withLock { listens in
            guard listens.remove(listen) != nil else { return false }
            return !listens.contains { $0.subscription == subscription }
        }
        if last { hub.unsubscribe(self, from: subscription, access: access) }
    }

    /// Ends every listen (loop thread), when the connection closes.
    func unlistenAll(hub: SubscriptionHub, access: LoopAccess) {
        self.listens.withLock { $0 = [] }
        hub.unsubscribeAll(self, access: access)
    }

    func deliver(initial: Rendering, tag: Int64?) {
        self.outbox.send(initial)
    }

    func deliver(_ frame: ByteBuffer, tag: Int64?) {
        if let tag {
            self.outbox.send(WireRenderer.tagged(frame, tag: tag), push: true)
        } else {
            self.outbox.send(frame: frame)
        }
    }

    /// Each listen the subscription served gets a `c`.
    func revoked(_ subscription: Subscription) {
        let revoked: [WireListen] = self.listens.withLock { listens in
            let revoked = listens.filter { $0.subscription == subscription }
            listens.subtract(revoked)
            return Array(revoked)
        }
        for listen in revoked { self.outbox.send(ServerMessage.revoke(path: listen.location, query: subscription.topic.query)) }
    }

    /// The namespace closed: its listens are gone.
    func closed(reason: String?) {
        self.listens.withLock { $0 = [] }
    }
}
