import CanopyCore
import NIOCore

/// An event stream is a subscriber with one subscription, sent server-sent events.
extension EventStream: Subscriber {
    var renderer: any SubscriptionRenderer { EventStreamRenderer.shared }

    /// What the stream shows: a live aggregate, a filtered query's window, or the location's data.
    var subscription: Subscription {
        let kind: Topic.Kind =
            if let aggregate = self.aggregate {
                .aggregate(self.query, aggregate)
            } else if let query = self.query {
                .query(query)
            } else {
                .location
            }
        return Subscription(topic: Topic(location: self.location, kind: kind))
    }

    func deliver(initial: Rendering, tag: Int64?) {
        self.sendInitial(initial)
    }

    func deliver(_ frame: ByteBuffer, tag: Int64?) {
        self.send(frame)
    }

    func revoked(_ subscription: Subscription) {
        self.finish(trailer: EventRender.cancel("Permission denied"))
    }

    func closed(reason: String?) {
        self.finish(trailer: reason.map { EventRender.cancel($0) })
    }
}

/// Renders server-sent events (see ``EventRender``): `put` and `patch` relative to the topic's
/// location.
final class EventStreamRenderer: SubscriptionRenderer {
    static let shared = EventStreamRenderer()

    func initial(_ snapshot: SubscriptionSnapshot, of topic: Topic, tag: Int64?) -> [UInt8] {
        switch snapshot {
        case .node(let node): EventRender.put(EmptyCollection(), node)
        case .aggregate(let value): EventRender.put(value)
        }
    }

    func render(_ update: SubscriptionUpdate, of topic: Topic) -> ByteBuffer? {
        let event: [UInt8]? =
            switch update {
            case .write(let write, let root): EventRender.event(for: write, root: root, at: topic.location)
            case .window(let change): EventRender.event(for: change)
            case .aggregate(let value): EventRender.put(value)
            }
        return event.map { ByteBuffer(bytes: $0) }
    }
}
