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
    typealias Batch = StateMachine<CheckedContinuation<Void, Never>>.Batch

    let id: UInt64
    let location: DatabasePath
    /// For a filtered query stream: the query, whose window the stream shows.
    let query: QueryParams?
    /// For an aggregate stream: what it aggregates over the query's range (or the location).
    let aggregate: AggregateRequest?
    private let state: Mutex<StateMachine<CheckedContinuation<Void, Never>>>
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
        self.state = Mutex(StateMachine(limit: OutboxLimit(limit), interval: scheduler?.intervalNanos))
        self.scheduler = scheduler
        self.disconnect = disconnect
    }

    /// Queues event bytes (any thread).
    ///
    /// The response task is woken at once, unless it was woken less than the scheduler's
    /// interval ago: then the wake is deferred to the scheduler's next tick, so that a busy
    /// stream writes its events in batches (one write per tick) instead of one by one.
    func send(_ bytes: ByteBuffer) {
        switch self.state.withLock({ $0.send(bytes, now: WakeScheduler.now()) }) {
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
        self.state.withLock { $0.wakeDeferred(now: WakeScheduler.now()) }?.resume()
    }

    func send(_ bytes: [UInt8]) {
        self.send(ByteBuffer(bytes: bytes))
    }

    /// The initial `put`, before anything else: a short one is queued as an event is; a long one
    /// is kept as it is (not copied, not counted against the limit; perhaps shared with other
    /// streams) and written by itself.
    func sendInitial(_ rendering: Rendering) {
        guard rendering.bytes.count > Self.initialCopyLimit else { return self.send(rendering.bytes) }
        self.state.withLock { $0.sendInitial(rendering) }?.resume()
    }

    /// An initial `put` longer than this is written by itself.
    static let initialCopyLimit = 64 << 10

    /// Ends the stream after what is queued and `trailer` (a `cancel` event, say).
    func finish(trailer: ByteBuffer? = nil) {
        self.state.withLock { $0.finish(trailer: trailer) }?.resume()
    }

    /// Drops the stream: nothing more is delivered (the client is gone).
    func drop() {
        self.state.withLock { $0.drop() }?.resume()
    }

    /// The next batch, waiting for one; `nil` once the stream ended. One consumer only.
    func next() async -> Batch? {
        while true {
            switch self.state.withLock({ $0.next() }) {
            case .batch(let batch): return batch
            case .end: return nil
            case .wait: break
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    if !self.state.withLock({ $0.wait(continuation) }) { continuation.resume() }
                }
            } onCancel: {
                self.drop()
            }
        }
    }
}
