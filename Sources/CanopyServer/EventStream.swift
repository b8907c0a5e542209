import Canopy
import CanopyCore
import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One streaming client's queue: the database loop appends event bytes (and, for a query
/// stream, the latest snapshot of the location), the response task takes them in batches.
///
/// Bounded: when more than `limit` bytes wait for a client that does not read, the stream is
/// dropped and its connection closed; other streams are not affected.
final class EventStream: Sendable {
    struct Batch {
        var bytes: ByteBuffer?
        var snapshot: Node?
        var trailer: ByteBuffer?
    }

    private struct State {
        var buffer: ByteBuffer?
        var snapshot: Node?
        var trailer: ByteBuffer?
        var waiter: CheckedContinuation<Void, Never>?
        /// No more events: what is queued is still delivered, then the stream ends.
        var finished = false
        /// Dropped: nothing more is delivered.
        var dropped = false
        /// When the response task was last woken (monotonic nanoseconds).
        var lastWake: UInt64 = 0
        /// A wake is scheduled with the ``WakeScheduler``.
        var deferred = false
    }

    let id: UInt64
    let location: DatabasePath
    /// For a filtered query stream.
    let query: QueryParams?
    private let limit: Int
    private let state = Mutex(State())
    /// Closes the connection (after an overflow).
    private let disconnect: @Sendable () -> Void
    /// Coalesces wakes of busy streams (see ``WakeScheduler``); `nil` wakes at once.
    private let scheduler: WakeScheduler?

    private static let nextID = Atomic<UInt64>(1)

    init(location: DatabasePath, query: QueryParams?, limit: Int, scheduler: WakeScheduler? = nil, disconnect: @escaping @Sendable () -> Void) {
        self.id = Self.nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        self.location = location
        self.query = query
        self.limit = limit
        self.scheduler = scheduler
        self.disconnect = disconnect
    }

    var isDropped: Bool { self.state.withLock { $0.dropped } }

    /// Queues event bytes (any thread).
    ///
    /// The response task is woken at once, unless it was woken less than the scheduler's
    /// interval ago: then the wake is deferred to the scheduler's next tick, so that a busy
    /// stream writes its events in batches (one write per tick) instead of one by one.
    func send(_ bytes: ByteBuffer) {
        enum Action { case none, wake(CheckedContinuation<Void, Never>), schedule, overflow(CheckedContinuation<Void, Never>?) }
        let action: Action = self.state.withLock { state in
            guard !state.finished && !state.dropped else { return .none }
            let queued = state.buffer?.readableBytes ?? 0
            if queued + bytes.readableBytes > self.limit {
                state.dropped = true
                state.buffer = nil
                state.snapshot = nil
                defer { state.waiter = nil }
                return .overflow(state.waiter)
            }
            if state.buffer == nil {
                state.buffer = bytes
            } else {
                var incoming = bytes
                state.buffer!.writeBuffer(&incoming)
            }
            guard let waiter = state.waiter else { return .none }
            if let scheduler = self.scheduler {
                if state.deferred { return .none }
                let now = WakeScheduler.now()
                if now &- state.lastWake < scheduler.intervalNanos {
                    state.deferred = true
                    return .schedule
                }
                state.lastWake = now
            }
            state.waiter = nil
            return .wake(waiter)
        }
        switch action {
        case .none: break
        case .wake(let waiter): waiter.resume()
        case .schedule: self.scheduler?.schedule(self)
        case .overflow(let waiter):
            waiter?.resume()
            self.disconnect()
        }
    }

    /// The scheduler's tick: wakes the response task if it waits with something queued.
    func wakeDeferred() {
        let waiter: CheckedContinuation<Void, Never>? = self.state.withLock { state in
            state.deferred = false
            guard state.buffer != nil || state.snapshot != nil || state.trailer != nil || state.dropped || state.finished else { return nil }
            state.lastWake = WakeScheduler.now()
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func send(_ bytes: [UInt8]) {
        self.send(ByteBuffer(bytes: bytes))
    }

    /// Replaces the pending snapshot of a query stream (any thread): only the newest matters.
    func send(snapshot: Node) {
        let waiter: CheckedContinuation<Void, Never>? = self.state.withLock { state in
            guard !state.finished && !state.dropped else { return nil }
            state.snapshot = snapshot
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Ends the stream after what is queued and `trailer` (a `cancel` event, say).
    func finish(trailer: ByteBuffer? = nil) {
        let waiter: CheckedContinuation<Void, Never>? = self.state.withLock { state in
            guard !state.finished && !state.dropped else { return nil }
            state.finished = true
            state.trailer = trailer
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Drops the stream: nothing more is delivered (the client is gone).
    func drop() {
        let waiter: CheckedContinuation<Void, Never>? = self.state.withLock { state in
            state.dropped = true
            state.buffer = nil
            state.snapshot = nil
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// The next batch, waiting for one; `nil` once the stream ended. One consumer only.
    func next() async -> Batch? {
        while true {
            enum Step { case batch(Batch), end, wait }
            let step: Step = self.state.withLock { state in
                if state.dropped { return .end }
                if state.buffer != nil || state.snapshot != nil || state.trailer != nil {
                    let batch = Batch(bytes: state.buffer, snapshot: state.snapshot, trailer: state.trailer)
                    state.buffer = nil
                    state.snapshot = nil
                    state.trailer = nil
                    return .batch(batch)
                }
                return state.finished ? .end : .wait
            }
            switch step {
            case .batch(let batch): return batch
            case .end: return nil
            case .wait: break
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = self.state.withLock { state in
                        if state.dropped || state.finished || state.buffer != nil || state.snapshot != nil || state.trailer != nil {
                            return true
                        }
                        state.waiter = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                self.drop()
            }
        }
    }
}

/// The streams of one namespace, and the one change follower that feeds them.
///
/// Streams are grouped by location, so an event is rendered once per location and write, not
/// once per client.
// @unchecked Sendable: every mutable property is touched only on the database's loop thread.
final class StreamHub: @unchecked Sendable {
    private final class Group {
        var plain: [UInt64: EventStream] = [:]
        var queries: [UInt64: EventStream] = [:]
        var isEmpty: Bool { self.plain.isEmpty && self.queries.isEmpty }
    }

    private var groups: [DatabasePath: Group] = [:]
    private var subscription: ChangeSubscription?
    private var closed = false

    /// Adds `stream` (loop thread), with the initial `put` of what it shows now queued first.
    /// Returns the initial value (the query window for a query stream).
    func add(_ stream: EventStream, access: LoopAccess) -> Node? {
        guard !self.closed else { return nil }
        let node = access.node(at: stream.location)
        let initial = stream.query.map { QueryWindow.apply(node, $0) } ?? node
        stream.send(EventRender.put(EmptyCollection(), initial))
        let group = self.groups[stream.location] ?? {
            let group = Group()
            self.groups[stream.location] = group
            return group
        }()
        if stream.query != nil { group.queries[stream.id] = stream } else { group.plain[stream.id] = stream }
        if self.subscription == nil {
            self.subscription = access.followChanges { [self] write, root in self.changed(write, root: root) }
        }
        return initial
    }

    /// Removes `stream` (loop thread); idempotent.
    func remove(_ stream: EventStream) {
        guard let group = self.groups[stream.location] else { return }
        group.plain[stream.id] = nil
        group.queries[stream.id] = nil
        if group.isEmpty {
            self.groups[stream.location] = nil
            if self.groups.isEmpty {
                self.subscription?.cancel()
                self.subscription = nil
            }
        }
    }

    /// Loop thread: after every write.
    private func changed(_ write: WriteOperation, root: Node) {
        for (location, group) in self.groups {
            if !group.plain.isEmpty, let event = EventRender.event(for: write, root: root, at: location) {
                let bytes = ByteBuffer(bytes: event)
                for stream in group.plain.values { stream.send(bytes) }
            }
            if !group.queries.isEmpty && (location.contains(write.path) || write.path.contains(location)) {
                let node = root.node(at: location.keys)
                for stream in group.queries.values { stream.send(snapshot: node) }
            }
        }
    }

    /// Every stream (any thread), for keep-alives.
    func forEachStream(database: Database, _ body: @escaping @Sendable (EventStream) -> Void) {
        database.onLoop { _ in
            for group in self.groups.values {
                for stream in group.plain.values { body(stream) }
                for stream in group.queries.values { body(stream) }
            }
        }
    }

    /// Ends every stream with a `cancel` event carrying `reason` and stops taking new ones.
    func closeAll(database: Database, reason: String?) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let accepted = database.onLoop { _ in
                self.closed = true
                let trailer = reason.map { EventRender.cancel($0) }
                for group in self.groups.values {
                    for stream in group.plain.values { stream.finish(trailer: trailer) }
                    for stream in group.queries.values { stream.finish(trailer: trailer) }
                }
                self.groups = [:]
                self.subscription?.cancel()
                self.subscription = nil
                continuation.resume()
            }
            if !accepted { continuation.resume() }
        }
    }
}

/// Defers the wakes of streams that were woken less than `interval` ago and wakes them all on
/// its next tick: under load, each stream then writes one batch per interval, whatever the write
/// rate, which bounds the per-event cost of the HTTP layer; an idle stream is still woken at once.
final class WakeScheduler: Sendable {
    let intervalNanos: UInt64
    private let interval: Duration
    private let pending = Mutex<(streams: [EventStream], ticking: Bool)>(([], false))

    init(interval: Duration) {
        self.interval = interval
        let (seconds, attoseconds) = interval.components
        self.intervalNanos = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    func schedule(_ stream: EventStream) {
        let start: Bool = self.pending.withLock { pending in
            pending.streams.append(stream)
            if pending.ticking { return false }
            pending.ticking = true
            return true
        }
        guard start else { return }
        Task {
            while true {
                try? await Task.sleep(for: self.interval)
                let due: [EventStream] = self.pending.withLock { pending in
                    if pending.streams.isEmpty {
                        pending.ticking = false
                        return []
                    }
                    defer { pending.streams = [] }
                    return pending.streams
                }
                if due.isEmpty { return }
                for stream in due { stream.wakeDeferred() }
            }
        }
    }
}
