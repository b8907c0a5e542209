import CanopyCore
import NIOCore
import Synchronization

/// One streaming client's queue: the database loop appends event bytes, the response task takes
/// them in batches.
///
/// The initial `put` is the exception: however large, it is handed over as its one rendering, by
/// itself (see ``sendInitial(_:)``), and written as the client reads it; the events that come
/// meanwhile wait behind it.
///
/// Bounded: when more than `limit` bytes of events wait for a client that does not read (a
/// single event alone is never too many), the stream is dropped and its connection closed; other
/// streams are not affected.
final class EventStream: Sendable {
    struct Batch {
        /// A long initial `put`: it comes alone, before any event.
        var snapshot: Rendering?
        var bytes: ByteBuffer?
        var trailer: ByteBuffer?
    }

    private struct State {
        /// A long initial `put`, not yet taken by the response task.
        var snapshot: Rendering?
        var buffer: ByteBuffer?
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
    /// For a filtered query stream: the query, whose window the stream shows.
    let query: QueryParams?
    /// For an aggregate stream: what it aggregates over the query's range (or the location).
    let aggregate: AggregateRequest?
    private let limit: Int
    private let state = Mutex(State())
    /// Closes the connection (after an overflow).
    private let disconnect: @Sendable () -> Void
    /// Coalesces wakes of busy streams (see ``WakeScheduler``); `nil` wakes at once.
    private let scheduler: WakeScheduler?

    /// Who opened it: new rules that no longer let it read cancel it.
    let identity: Identity

    init(
        location: DatabasePath, query: QueryParams?, aggregate: AggregateRequest? = nil, limit: Int, identity: Identity = .admin,
        scheduler: WakeScheduler? = nil,
        disconnect: @escaping @Sendable () -> Void
    ) {
        self.id = SubscriberID.next()
        self.identity = identity
        self.location = location
        self.query = query
        self.aggregate = aggregate
        self.limit = limit
        self.scheduler = scheduler
        self.disconnect = disconnect
    }

    /// Queues event bytes (any thread).
    ///
    /// The response task is woken at once, unless it was woken less than the scheduler's
    /// interval ago: then the wake is deferred to the scheduler's next tick, so that a busy
    /// stream writes its events in batches (one write per tick) instead of one by one.
    func send(_ bytes: ByteBuffer) {
        enum Action {
            case none
            case wake(CheckedContinuation<Void, Never>)
            case schedule
            case overflow(CheckedContinuation<Void, Never>?)
        }
        let action: Action = self.state.withLock { state in
            guard !state.finished && !state.dropped else { return .none }
            let queued = state.buffer?.readableBytes ?? 0
            if queued > 0 && queued + bytes.readableBytes > self.limit {
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
            guard state.snapshot != nil || state.buffer != nil || state.trailer != nil || state.dropped || state.finished else {
                return nil
            }
            state.lastWake = WakeScheduler.now()
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func send(_ bytes: [UInt8]) {
        self.send(ByteBuffer(bytes: bytes))
    }

    /// The initial `put`, before anything else: a short one is queued as an event is; a long one
    /// is kept as it is (not copied, not counted against the limit; perhaps shared with other
    /// streams) and written by itself.
    func sendInitial(_ rendering: Rendering) {
        guard rendering.bytes.count > Self.initialCopyLimit else { return self.send(rendering.bytes) }
        let waiter: CheckedContinuation<Void, Never>? = self.state.withLock { state in
            guard !state.finished && !state.dropped else { return nil }
            precondition(state.buffer == nil && state.snapshot == nil, "the initial put comes first")
            state.snapshot = rendering
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// An initial `put` longer than this is written by itself.
    static let initialCopyLimit = 64 << 10

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
            enum Step {
                case batch(Batch)
                case end, wait
            }
            let step: Step = self.state.withLock { state in
                if state.dropped { return .end }
                if let snapshot = state.snapshot {
                    state.snapshot = nil
                    return .batch(Batch(snapshot: snapshot))
                }
                if state.buffer != nil || state.trailer != nil {
                    let batch = Batch(bytes: state.buffer, trailer: state.trailer)
                    state.buffer = nil
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
                        if state.dropped || state.finished || state.snapshot != nil || state.buffer != nil || state.trailer != nil {
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
