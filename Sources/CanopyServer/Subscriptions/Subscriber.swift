import Canopy
import CanopyCore
import NIOCore
import Synchronization

/// A client of the ``SubscriptionHub``: a server-sent event stream, an SDK connection. The hub
/// calls it on the database's loop thread; what it is sent comes from its ``renderer``, rendered
/// once for every subscriber of a topic that has the same renderer.
protocol Subscriber: AnyObject, Sendable {
    /// Unique among subscribers (see ``SubscriberID``).
    var id: UInt64 { get }
    /// Who it reads as: rules that no longer let it read revoke its subscriptions.
    var identity: Identity { get }
    /// How what it is sent is rendered.
    var renderer: any SubscriptionRenderer { get }
    /// Queues what a new subscription (`tag`) starts with, before any update.
    func deliver(initial: Rendering, tag: Int64?)
    /// Queues an update of a subscription (`tag`), rendered once for the subscribers of its topic.
    func deliver(_ frame: ByteBuffer, tag: Int64?)
    /// The hub ended `subscription`: the rules no longer let the subscriber read it.
    func revoked(_ subscription: Subscription)
    /// The hub closed (its database closes) and ended every subscription; `reason` is for the client.
    func closed(reason: String?)
}

/// The ids of subscribers, unique in the process whatever their kind.
enum SubscriberID {
    private static let last = Atomic<UInt64>(0)

    static func next() -> UInt64 {
        self.last.wrappingAdd(1, ordering: .relaxed).newValue
    }
}
