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
