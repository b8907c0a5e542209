import CanopyCore
import NIOCore

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
