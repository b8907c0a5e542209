import Canopy
import CanopyCore

extension SubscriptionHub {
    /// Ends the subscriptions `denied` says may no longer be read (loop thread), telling their
    /// subscribers (``Subscriber/revoked(_:)``): new rules, or a subscriber's new identity, took
    /// their access away.
    /// - Complexity: O(*s*) for *s* subscriptions, plus the rule evaluations of `denied`.
    func revoke(access: LoopAccess, where denied: (any Subscriber, Subscription) -> Bool) {
        self.assertOnLoop()
        for (subscriber, subscriptions) in self.allSubscriptions {
            for subscription in subscriptions where denied(subscriber, subscription) {
                self.unsubscribe(subscriber, from: subscription, access: access)
                subscriber.revoked(subscription)
            }
        }
    }

    /// ``revoke(access:where:)`` for the subscriptions of one subscriber.
    /// - Complexity: O(*s*) for its *s* subscriptions, plus the rule evaluations of `denied`.
    func revoke(of subscriber: any Subscriber, access: LoopAccess, where denied: (Subscription) -> Bool) {
        self.assertOnLoop()
        for subscription in self.subscriptions(of: subscriber) where denied(subscription) {
            self.unsubscribe(subscriber, from: subscription, access: access)
            subscriber.revoked(subscription)
        }
    }

    /// Ends every subscription, telling each subscriber with `reason` (``Subscriber/closed(reason:)``),
    /// and takes no new ones (any thread).
    func closeAll(reason: String?) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            guard let database = self.database else { return continuation.resume() }
            let accepted = database.onLoop { access in
                for subscriber in self.close(access: access) { subscriber.closed(reason: reason) }
                continuation.resume()
            }
            if !accepted { continuation.resume() }
        }
    }
}
