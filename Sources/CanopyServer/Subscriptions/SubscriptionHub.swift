import Canopy
import CanopyCore
import NIOCore

/// The subscriptions of one namespace and what feeds them, on the database's loop thread, for
/// every kind of subscriber (server-sent event streams and SDK connections alike: see
/// ``Subscriber``).
///
/// A subscription to a location's data follows every write through one change follower for the
/// hub; a write reaches only the subscribed locations on its paths (a ``LocationTrie``): O(*d*)
/// for a write at depth *d*, plus the locations it touches, whatever the number of subscribed
/// locations. A subscription to a filtered query follows the engine's view of that query (the
/// view `observe` uses too, kept up to date in O(log *n*) per changed child), and one to a live
/// aggregate the engine's aggregate listener: the hub listens once per topic. Whatever the
/// topic, an update is rendered once per renderer (wire format), not once per subscriber, and
/// the initial data of a location is rendered once for the subscribers that start before the
/// next write (``Renderings``).
// @unchecked Sendable: every mutable property is touched only on the database's loop thread
// (checked in debug builds).
final class SubscriptionHub: @unchecked Sendable {
    /// A subscriber and its subscriptions.
    private struct Entry {
        let subscriber: any Subscriber
        var subscriptions: Set<Subscription> = []
    }

    /// Weak: the namespace holds both (the database's followers and listeners refer to the hub
    /// unowned).
    weak let database: Database?
    /// Every topic with subscribers.
    private var groups: [Topic: SubscriptionGroup] = [:]
    /// The groups of location topics, found by the writes that touch them.
    private var locations = LocationTrie<SubscriptionGroup>()
    private var subscribers: [UInt64: Entry] = [:]
    /// Follows every write while some location has subscribers.
    private var following: ChangeSubscription?
    /// Initial data of locations, shared until the next write.
    private var renderings = Renderings()
    private var closed = false

    init(database: Database) {
        self.database = database
    }

    func assertOnLoop(file: StaticString = #fileID, line: UInt = #line) {
        self.database?.assertOnLoop("SubscriptionHub is used on its database's loop thread only", file: file, line: line)
    }

    /// What ``subscribe(_:to:limit:access:)`` did.
    enum Start: Equatable {
        case added
        /// The hub is closed.
        case closed
        /// The initial data would be longer than the limit: nothing was added.
        case tooLarge
    }

    /// Subscribes `subscriber` to `subscription` (loop thread) and queues what it starts with (what
    /// the topic shows now), unless that is longer than `limit` bytes. Subscribing again to the
    /// same subscription queues its initial data again.
    func subscribe(_ subscriber: any Subscriber, to subscription: Subscription, limit: Int, access: LoopAccess) -> Start {
        self.assertOnLoop()
        guard !self.closed else { return .closed }
        let topic = subscription.topic
        let renderer = subscriber.renderer
        let initial: Rendering
        let group: SubscriptionGroup
        if case .location = topic.kind {
            // Valid until the next write: the hub follows every write while it has location
            // subscribers, and forgets the renderings when it stops following.
            if self.following == nil { self.renderings.removeAll() }
            let render = { renderer.initial(.node(access.node(at: topic.location)), of: topic, tag: subscription.tag) }
            initial =
                if subscription.tag == nil {
                    self.renderings.rendering(at: topic.location, renderer: renderer, render: render)
                } else {
                    Rendering(render())
                }
            guard initial.bytes.count <= limit else { return .tooLarge }
            group = self.group(for: topic, access: access)
        } else {
            group = self.group(for: topic, access: access)
            initial = Rendering(renderer.initial(group.snapshot, of: topic, tag: subscription.tag))
            guard initial.bytes.count <= limit else {
                self.dropIfEmpty(group, access: access)
                return .tooLarge
            }
        }
        group.insert(subscriber, tag: subscription.tag)
        self.subscribers[subscriber.id, default: Entry(subscriber: subscriber)].subscriptions.insert(subscription)
        subscriber.deliver(initial: initial, tag: subscription.tag)
        return .added
    }

    /// Ends one subscription of `subscriber` (loop thread); idempotent.
    func unsubscribe(_ subscriber: any Subscriber, from subscription: Subscription, access: LoopAccess) {
        self.assertOnLoop()
        guard self.subscribers[subscriber.id]?.subscriptions.remove(subscription) != nil else { return }
        if self.subscribers[subscriber.id]?.subscriptions.isEmpty == true { self.subscribers[subscriber.id] = nil }
        self.remove(subscriber.id, from: subscription, access: access)
    }

    /// Ends every subscription of `subscriber` (loop thread); idempotent.
    func unsubscribeAll(_ subscriber: any Subscriber, access: LoopAccess) {
        self.assertOnLoop()
        guard let entry = self.subscribers.removeValue(forKey: subscriber.id) else { return }
        for subscription in entry.subscriptions { self.remove(subscriber.id, from: subscription, access: access) }
    }

    /// Every subscriber with its subscriptions (loop thread).
    var allSubscriptions: [(any Subscriber, Set<Subscription>)] {
        self.subscribers.values.map { ($0.subscriber, $0.subscriptions) }
    }

    /// The subscriptions of `subscriber` (loop thread).
    func subscriptions(of subscriber: any Subscriber) -> Set<Subscription> {
        self.subscribers[subscriber.id]?.subscriptions ?? []
    }

    /// Ends every subscription and takes no new ones (loop thread); returns the subscribers.
    func close(access: LoopAccess) -> [any Subscriber] {
        self.assertOnLoop()
        self.closed = true
        for group in self.groups.values { group.stopListening(access: access) }
        self.following?.cancel()
        self.following = nil
        self.groups = [:]
        self.locations = LocationTrie()
        defer { self.subscribers = [:] }
        return self.subscribers.values.map(\.subscriber)
    }

    /// The group of `topic`, started (with its engine listener or the hub's change follower) if
    /// it has none yet.
    private func group(for topic: Topic, access: LoopAccess) -> SubscriptionGroup {
        if let group = self.groups[topic] { return group }
        let group = SubscriptionGroup(topic: topic)
        switch topic.kind {
        case .location:
            self.locations.set(group, at: topic.location)
            if self.following == nil {
                self.following = access.followChanges { [unowned self] write, root in self.changed(write, root: root) }
            }
        case .query(let params):
            let (listener, window) = access.listen(at: topic.location, params: params) { [unowned self, unowned group] change in
                self.assertOnLoop()
                group.snapshot = .node(change.new)
                group.deliver(.window(change))
            }
            group.listener = .view(listener)
            group.snapshot = .node(window)
        case .aggregate(let params, let request):
            let (listener, value) = access.listen(at: topic.location, params: params ?? .default, request: request) {
                [unowned self, unowned group] value in
                self.assertOnLoop()
                group.snapshot = .aggregate(value.json)
                group.deliver(.aggregate(value.json))
            }
            group.listener = .aggregate(listener)
            group.snapshot = .aggregate(value.json)
        }
        self.groups[topic] = group
        return group
    }

    private func remove(_ subscriber: UInt64, from subscription: Subscription, access: LoopAccess) {
        guard let group = self.groups[subscription.topic] else { return }
        _ = group.remove(SubscriptionGroup.Member(subscriber: subscriber, tag: subscription.tag))
        self.dropIfEmpty(group, access: access)
    }

    /// Stops feeding a group left with no subscriber.
    private func dropIfEmpty(_ group: SubscriptionGroup, access: LoopAccess) {
        guard group.isEmpty else { return }
        self.groups[group.topic] = nil
        group.stopListening(access: access)
        guard case .location = group.topic.kind else { return }
        self.locations.set(nil, at: group.topic.location)
        if self.locations.count == 0 {
            self.following?.cancel()
            self.following = nil
        }
    }

    /// Loop thread: after every write, for the subscribers of the locations it touched.
    private func changed(_ write: WriteOperation, root: Node) {
        self.assertOnLoop()
        self.renderings.removeAll()
        self.locations.forEachTouched(by: write.path, entries: write.entries.map(\.path)) { _, group in
            group.deliver(.write(write, root: root))
        }
    }
}
