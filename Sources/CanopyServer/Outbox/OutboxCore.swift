/// What every per-client outbox shares, whatever carries its messages (a WebSocket's
/// ``WireOutbox``, a long-poll connection's ``LongPollOutbox``): the lifecycle, the callers waiting
/// for what is queued to go out, and the byte accounting against the buffer limits. A state
/// machine whose transitions return what the caller does; the queue itself is the transport's,
/// and the machine is told whether anything waits (`drained`). Generic over the waiting callers,
/// so that a test can walk every transition without tasks.
///
/// ```
/// open ──finish, not drained──▶ finishing ──drained──▶ closed
///   └───────── finish, drained ───────────────────────▶ closed
/// any ──close (overflow, cut-off, the client left), fail──▶ closed (final)
/// ```
///
/// Bounded: when more than `limit` bytes of messages other than long answers wait (queued, or
/// handed to the transport but not yet taken by the client), or more than `answerLimit` bytes of
/// long answers, ``admit(_:answer:)`` asks the caller to cut the client off; a single message
/// alone is never too many (see ``OutboxLimit``).
struct OutboxCore<Waiter> {
    enum Phase: Equatable {
        /// Messages are taken.
        case open
        /// No more messages are taken; what is queued still goes out.
        case finishing
        /// No more messages are taken or go out. Final.
        case closed
    }

    private(set) var phase = Phase.open
    private(set) var bytes = OutboxBytes()
    /// Callers of the outbox's `finish()`, waiting for everything to go out.
    private var waiters: [Waiter] = []
    /// The most bytes of messages other than long answers that may wait.
    let limit: OutboxLimit
    /// The most bytes of long answers that may wait at once.
    let answerLimit: OutboxLimit

    init(limit: OutboxLimit, answerLimit: OutboxLimit = OutboxLimit(.max)) {
        self.limit = limit
        self.answerLimit = answerLimit
    }

    /// Messages are taken.
    var accepts: Bool { self.phase == .open }

    /// What ``admit(_:answer:)`` found.
    enum Admission: Equatable {
        /// The outbox takes no more messages: drop this one.
        case refused
        /// Queue it, and count the bytes it took (``queued(_:answer:)``).
        case admitted
        /// Too much waits for the client: cut it off (``close()``).
        case overflow
    }

    /// Whether a message of `size` bytes may be queued (`answer`: a long answer, counted apart).
    func admit(_ size: Int, answer: Bool) -> Admission {
        guard self.accepts else { return .refused }
        let fits =
            answer
            ? self.answerLimit.admits(size, queued: self.bytes.answers) : self.limit.admits(size, queued: self.bytes.waiting)
        return fits ? .admitted : .overflow
    }

    /// A message of `size` bytes was queued (`answer`: a long answer).
    mutating func queued(_ size: Int, answer: Bool) {
        if answer { self.bytes.answers += size } else { self.bytes.queued += size }
    }

    /// `size` bytes of queued messages went to the transport; they wait for the client still.
    mutating func handedOver(_ size: Int) {
        self.bytes.queued -= size
        self.bytes.inFlight += size
    }

    /// The client took `size` bytes that were handed to the transport (or they never will be
    /// taken: the connection is gone).
    mutating func taken(inFlight size: Int) {
        self.bytes.inFlight -= size
    }

    /// `size` bytes left the queue for the client at once (`answer`: of a long answer).
    mutating func taken(_ size: Int, answer: Bool) {
        if answer { self.bytes.answers -= size } else { self.bytes.queued -= size }
    }

    /// What ``finish(_:drained:)`` asks of the caller.
    enum FinishAction {
        /// Resume the caller now (`drop`: forget what is queued; nothing more goes out).
        case resume(drop: Bool)
        /// The caller waits until everything went out (``idle(drained:)``) or the outbox closed.
        case wait

        /// The caller forgets what is queued.
        var drops: Bool { if case .resume(drop: true) = self { true } else { false } }
        /// The caller is resumed at once.
        var resumesNow: Bool { if case .resume = self { true } else { false } }
    }

    /// Stops taking messages; `waiter` waits until nothing is queued or in flight (`drained`).
    /// `nil`: nobody waits (the transport's consumer takes what is left, then the end).
    mutating func finish(_ waiter: Waiter?, drained: Bool) -> FinishAction {
        switch self.phase {
        case .open:
            if drained {
                self.phase = .closed
                self.forgetQueued()
                return .resume(drop: true)
            }
            self.phase = .finishing
        case .finishing:
            if drained { return .resume(drop: false) }
        case .closed:
            if drained {
                self.forgetQueued()
                return .resume(drop: true)
            }
        }
        if let waiter { self.waiters.append(waiter) }
        return .wait
    }

    /// Nothing more goes out for now; `drained`: nothing is queued or in flight. Once drained,
    /// returns the ``finish(_:drained:)`` callers, and a finishing outbox is closed.
    mutating func idle(drained: Bool) -> [Waiter] {
        guard drained else { return [] }
        if self.phase == .finishing { self.phase = .closed }
        defer { self.waiters = [] }
        return self.waiters
    }

    /// The client is cut off (an overflow, no progress for a whole timeout) or gone, or the
    /// server ends the session: nothing more goes out. Returns the ``finish(_:drained:)`` callers
    /// to resume; the caller drops what is queued.
    mutating func close() -> [Waiter] {
        self.phase = .closed
        self.forgetQueued()
        defer { self.waiters = [] }
        return self.waiters
    }

    /// A write failed: the connection is gone, nothing more goes out. The caller drops what is
    /// queued; the ``finish(_:drained:)`` callers wait for the writes in flight to end
    /// (``idle(drained:)``).
    mutating func fail() {
        self.phase = .closed
        self.forgetQueued()
    }

    /// Forgets the bytes of what is queued (the caller drops it); what is in flight still ends.
    private mutating func forgetQueued() {
        self.bytes.queued = 0
        self.bytes.answers = 0
    }
}
