import CanopyCore
import NIOCore

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
