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

/// What a subscription starts with.
enum SubscriptionSnapshot {
    /// A location's data, or a query's window.
    case node(Node)
    /// A live aggregate's value.
    case aggregate(JSONValue)
}

/// What changed for the subscribers of one topic.
enum SubscriptionUpdate {
    /// A write (with the tree after it), for the subscribers of a location's data.
    case write(WriteOperation, root: Node)
    /// A write changed a query's window.
    case window(ViewChange)
    /// A live aggregate's new value.
    case aggregate(JSONValue)
}

/// Renders a topic's data and updates in one wire format. One instance per format: subscribers
/// with the same renderer share its renderings.
protocol SubscriptionRenderer: AnyObject, Sendable {
    /// What a subscription (`tag`) of `topic` starts with.
    func initial(_ snapshot: SubscriptionSnapshot, of topic: Topic, tag: Int64?) -> [UInt8]
    /// What the subscribers of `topic` are sent for `update`; `nil` when it shows them nothing new.
    func render(_ update: SubscriptionUpdate, of topic: Topic) -> ByteBuffer?
}
