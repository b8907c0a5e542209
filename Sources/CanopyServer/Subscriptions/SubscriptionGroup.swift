import Canopy
import CanopyCore
import NIOCore

/// The subscribers of one topic, grouped by renderer, with what feeds them: an update is rendered
/// once per renderer and queued on each of its subscribers. Used on the database's loop thread.
final class SubscriptionGroup {
    /// A subscriber's membership: one per subscriber and tag.
    struct Member: Hashable {
        var subscriber: UInt64
        var tag: Int64?
    }

    /// The subscribers that share one renderer.
    private struct Bucket {
        let renderer: any SubscriptionRenderer
        var members: [Member: any Subscriber] = [:]
    }

    /// The engine listener that feeds a query or aggregate topic.
    enum Listener {
        case view(ViewListener)
        case aggregate(AggregateListener)
    }

    let topic: Topic
    private var buckets: [Bucket] = []
    var listener: Listener?
    /// A query's window or an aggregate's value, as last delivered (unused for a location).
    var snapshot = SubscriptionSnapshot.node(.empty)

    init(topic: Topic) {
        self.topic = topic
    }

    var isEmpty: Bool { self.buckets.isEmpty }

    /// Adds `subscriber` (under `tag`); adding it again changes nothing.
    func insert(_ subscriber: any Subscriber, tag: Int64?) {
        let member = Member(subscriber: subscriber.id, tag: tag)
        if let index = self.buckets.firstIndex(where: { $0.renderer === subscriber.renderer }) {
            self.buckets[index].members[member] = subscriber
        } else {
            var bucket = Bucket(renderer: subscriber.renderer)
            bucket.members[member] = subscriber
            self.buckets.append(bucket)
        }
    }

    /// Removes a membership; `false` when there was none.
    func remove(_ member: Member) -> Bool {
        for index in self.buckets.indices {
            guard self.buckets[index].members.removeValue(forKey: member) != nil else { continue }
            if self.buckets[index].members.isEmpty { self.buckets.remove(at: index) }
            return true
        }
        return false
    }

    /// Renders `update` once per renderer and queues it on every member.
    /// - Complexity: O(*s*) for *s* members, plus one rendering per renderer.
    func deliver(_ update: SubscriptionUpdate) {
        for bucket in self.buckets {
            guard let frame = bucket.renderer.render(update, of: self.topic) else { continue }
            for (member, subscriber) in bucket.members { subscriber.deliver(frame, tag: member.tag) }
        }
    }

    /// Stops the engine listener, if any.
    func stopListening(access: LoopAccess) {
        switch self.listener {
        case .view(let listener)?: access.stopListening(listener)
        case .aggregate(let listener)?: access.stopListening(listener)
        case nil: break
        }
        self.listener = nil
    }
}
