import Canopy
import CanopyCore
import NIOCore

/// The streams of one namespace and what feeds them, on the database's loop thread.
///
/// A stream on a location follows every write (one change follower for the whole hub), and the
/// event of a write is rendered once per location, not once per client. A stream on a filtered
/// query follows the engine's view of that query (the view `observe` uses too, kept up to date in
/// O(log *n*) per changed child): the hub listens once per location and query, renders each change
/// of the window once, and queues it on every stream of that query.
// @unchecked Sendable: every mutable property is touched only on the database's loop thread
// (checked in debug builds).
final class StreamHub: @unchecked Sendable {
    /// The streams on one location.
    private final class LocationStreams {
        var streams: [UInt64: EventStream] = [:]
    }

    /// The streams on one filtered query, its engine listener and the window they were last sent.
    private final class QueryStreams {
        var streams: [UInt64: EventStream] = [:]
        var listener: ViewListener?
        var window: Node = .empty
    }

    private struct QueryKey: Hashable {
        var location: DatabasePath
        var params: QueryParams
    }

    /// The streams on one live aggregate, its engine listener and the value they were last sent.
    private final class AggregateStreams {
        var streams: [UInt64: EventStream] = [:]
        var listener: AggregateListener?
        var value: JSONValue = .null
    }

    private struct AggregateKey: Hashable {
        var query: QueryKey
        var request: AggregateRequest
    }

    /// Weak: the database's change followers hold the hub.
    private weak let database: Database?
    private var locations: [DatabasePath: LocationStreams] = [:]
    private var queries: [QueryKey: QueryStreams] = [:]
    private var aggregates: [AggregateKey: AggregateStreams] = [:]
    private var subscription: ChangeSubscription?
    /// The initial `put` of location streams, shared by those on one location until the next write.
    private var renderings = Renderings()
    private var closed = false

    init(database: Database) {
        self.database = database
    }

    private func assertOnLoop(file: StaticString = #fileID, line: UInt = #line) {
        self.database?.assertOnLoop("StreamHub is used on its database's loop thread only", file: file, line: line)
    }

    /// What ``add(_:limit:access:)`` did.
    enum Start: Equatable {
        case added
        /// The hub is closed.
        case closed
        /// The initial `put` would be longer than the limit: nothing was added.
        case tooLarge
    }

    /// Adds `stream` (loop thread), with the initial `put` of what it shows now (the query's
    /// window for a query stream) queued first, unless that `put` is longer than `limit` bytes.
    func add(_ stream: EventStream, limit: Int, access: LoopAccess) -> Start {
        self.assertOnLoop()
        guard !self.closed else { return .closed }
        if let request = stream.aggregate {
            let key = AggregateKey(query: QueryKey(location: stream.location, params: stream.query ?? .default), request: request)
            let group: AggregateStreams
            if let existing = self.aggregates[key] {
                group = existing
            } else {
                group = AggregateStreams()
                let (listener, value) = access.listen(at: key.query.location, params: key.query.params, request: request) {
                    [self, group] value in
                    self.aggregateChanged(value, group)
                }
                group.listener = listener
                group.value = value.json
                self.aggregates[key] = group
            }
            group.streams[stream.id] = stream
            stream.send(EventRender.put(group.value))
            return .added
        }
        if let params = stream.query {
            let key = QueryKey(location: stream.location, params: params)
            let group: QueryStreams
            if let existing = self.queries[key] {
                group = existing
            } else {
                group = QueryStreams()
                let (listener, window) = access.listen(at: stream.location, params: params) { [self, group] change in
                    self.windowChanged(change, group)
                }
                group.listener = listener
                group.window = window
                self.queries[key] = group
            }
            let initial = Rendering(EventRender.put(EmptyCollection(), group.window))
            guard initial.bytes.count <= limit else {
                if group.streams.isEmpty {
                    self.queries[key] = nil
                    if let listener = group.listener { access.stopListening(listener) }
                }
                return .tooLarge
            }
            group.streams[stream.id] = stream
            stream.sendInitial(initial)
            return .added
        }
        // Rendered once (for every stream on the location until the next write: the hub follows
        // every write while it has location streams); a long one is written as the client reads it.
        if self.subscription == nil { self.renderings.removeAll() }
        let initial = self.renderings.rendering(at: stream.location) {
            EventRender.put(EmptyCollection(), access.node(at: stream.location))
        }
        guard initial.bytes.count <= limit else { return .tooLarge }
        let group =
            self.locations[stream.location]
            ?? {
                let group = LocationStreams()
                self.locations[stream.location] = group
                return group
            }()
        group.streams[stream.id] = stream
        if self.subscription == nil {
            self.subscription = access.followChanges { [self] write, root in self.changed(write, root: root) }
        }
        stream.sendInitial(initial)
        return .added
    }

    /// Removes `stream` (loop thread); idempotent.
    func remove(_ stream: EventStream, access: LoopAccess) {
        self.assertOnLoop()
        if let request = stream.aggregate {
            let key = AggregateKey(query: QueryKey(location: stream.location, params: stream.query ?? .default), request: request)
            guard let group = self.aggregates[key], group.streams.removeValue(forKey: stream.id) != nil else { return }
            if group.streams.isEmpty {
                self.aggregates[key] = nil
                if let listener = group.listener { access.stopListening(listener) }
            }
            return
        }
        if let params = stream.query {
            let key = QueryKey(location: stream.location, params: params)
            guard let group = self.queries[key], group.streams.removeValue(forKey: stream.id) != nil else { return }
            if group.streams.isEmpty {
                self.queries[key] = nil
                if let listener = group.listener { access.stopListening(listener) }
            }
            return
        }
        guard let group = self.locations[stream.location], group.streams.removeValue(forKey: stream.id) != nil else { return }
        if group.streams.isEmpty {
            self.locations[stream.location] = nil
            if self.locations.isEmpty {
                self.subscription?.cancel()
                self.subscription = nil
            }
        }
    }

    /// Loop thread: after every write, for the streams on locations.
    private func changed(_ write: WriteOperation, root: Node) {
        self.assertOnLoop()
        self.renderings.removeAll()
        for (location, group) in self.locations {
            guard let event = EventRender.event(for: write, root: root, at: location) else { continue }
            let bytes = ByteBuffer(bytes: event)
            for stream in group.streams.values { stream.send(bytes) }
        }
    }

    /// Loop thread: after a write that changed a query's window.
    private func windowChanged(_ change: ViewChange, _ group: QueryStreams) {
        self.assertOnLoop()
        group.window = change.new
        guard let event = EventRender.event(for: change) else { return }
        let bytes = ByteBuffer(bytes: event)
        for stream in group.streams.values { stream.send(bytes) }
    }

    /// Loop thread: after a write that changed a live aggregate's value.
    private func aggregateChanged(_ value: AggregateResult, _ group: AggregateStreams) {
        self.assertOnLoop()
        group.value = value.json
        let bytes = ByteBuffer(bytes: EventRender.put(group.value))
        for stream in group.streams.values { stream.send(bytes) }
    }

    /// Ends the streams `denied` says may no longer read, with a `cancel` event (loop thread):
    /// new rules took their access away.
    /// - Complexity: O(*t*) for *t* streams, plus the rule evaluations of `denied`.
    func revoke(where denied: (EventStream) -> Bool, access: LoopAccess) {
        self.assertOnLoop()
        for stream in self.allStreams where denied(stream) {
            stream.finish(trailer: EventRender.cancel("Permission denied"))
            self.remove(stream, access: access)
        }
    }

    /// Every stream (loop thread).
    private var allStreams: [EventStream] {
        self.locations.values.flatMap { $0.streams.values } + self.queries.values.flatMap { $0.streams.values }
            + self.aggregates.values.flatMap { $0.streams.values }
    }

    /// Ends every stream with a `cancel` event carrying `reason` and stops taking new ones (any
    /// thread).
    func closeAll(reason: String?) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            guard let database = self.database else { return continuation.resume() }
            let accepted = database.onLoop { access in
                self.assertOnLoop()
                self.closed = true
                let trailer = reason.map { EventRender.cancel($0) }
                for stream in self.allStreams { stream.finish(trailer: trailer) }
                for group in self.queries.values {
                    if let listener = group.listener { access.stopListening(listener) }
                }
                for group in self.aggregates.values {
                    if let listener = group.listener { access.stopListening(listener) }
                }
                self.aggregates = [:]
                self.locations = [:]
                self.queries = [:]
                self.subscription?.cancel()
                self.subscription = nil
                continuation.resume()
            }
            if !accepted { continuation.resume() }
        }
    }
}
