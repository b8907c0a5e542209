import NIOCore

extension EventStream {
    /// The lifecycle of one stream's queue, as a state machine whose transitions return what the
    /// caller does (resume the response task, schedule a deferred wake, close an overflowing
    /// connection). Generic over the waiting response task, so that a test can walk every
    /// transition without tasks.
    ///
    /// ```
    /// streaming ──finish──▶ finishing ──next (queue taken)──▶ ended
    ///     └──── drop, overflow ─────────────────────────────▶ ended (final)
    /// ```
    struct StateMachine<Waiter> {
        enum Phase: Equatable {
            /// Events are taken and delivered.
            case streaming
            /// No more events: what is queued (then the trailer) is still delivered.
            case finishing
            /// Nothing more is delivered: the stream ended, or was dropped. Final.
            case ended
        }

        /// What a response task takes at once.
        struct Batch {
            /// A long initial `put`: it comes alone, before any event.
            var snapshot: Rendering?
            var bytes: ByteBuffer?
            var trailer: ByteBuffer?
        }

        private(set) var phase = Phase.streaming
        /// A long initial `put`, not yet taken.
        private var snapshot: Rendering?
        private var buffer: ByteBuffer?
        private var trailer: ByteBuffer?
        /// The response task, waiting for something to take.
        private var waiter: Waiter?
        /// When the response task was last woken (monotonic nanoseconds).
        private var lastWake: UInt64 = 0
        /// A wake is scheduled for the coalescing interval's end.
        private(set) var deferred = false
        /// The most bytes of events that may wait.
        let limit: OutboxLimit
        /// The coalescing interval in nanoseconds; `nil` wakes at once.
        let interval: UInt64?

        init(limit: OutboxLimit, interval: UInt64?) {
            self.limit = limit
            self.interval = interval
        }

        /// Something waits for the response task (or the end does).
        private var hasNews: Bool {
            self.phase != .streaming || self.snapshot != nil || self.buffer != nil || self.trailer != nil
        }

        /// What ``send(_:now:)`` asks of the caller.
        enum SendAction {
            case none
            /// Resume the response task.
            case wake(Waiter)
            /// Have the scheduler call ``wakeDeferred(now:)`` at its next tick.
            case schedule
            /// Too many bytes wait: the stream is dropped; resume the task (if it waits) and
            /// close the connection.
            case overflow(Waiter?)
        }

        /// Queues event bytes. `now`: the monotonic clock, read only when coalescing.
        mutating func send(_ bytes: ByteBuffer, now: @autoclosure () -> UInt64) -> SendAction {
            guard self.phase == .streaming else { return .none }
            guard self.limit.admits(bytes.readableBytes, queued: self.buffer?.readableBytes ?? 0) else {
                return .overflow(self.end())
            }
            if self.buffer == nil {
                self.buffer = bytes
            } else {
                var incoming = bytes
                self.buffer!.writeBuffer(&incoming)
            }
            guard let waiter = self.waiter else { return .none }
            if let interval = self.interval {
                if self.deferred { return .none }
                let now = now()
                if now &- self.lastWake < interval {
                    self.deferred = true
                    return .schedule
                }
                self.lastWake = now
            }
            self.waiter = nil
            return .wake(waiter)
        }

        /// Queues a long initial `put`, before anything else; returns the task to resume.
        mutating func sendInitial(_ rendering: Rendering) -> Waiter? {
            guard self.phase == .streaming else { return nil }
            precondition(self.buffer == nil && self.snapshot == nil, "the initial put comes first")
            self.snapshot = rendering
            return self.takeWaiter()
        }

        /// The scheduler's tick; returns the task to resume if it waits with something to take.
        mutating func wakeDeferred(now: UInt64) -> Waiter? {
            self.deferred = false
            guard self.hasNews else { return nil }
            self.lastWake = now
            return self.takeWaiter()
        }

        /// No more events: what is queued, then `trailer`, ends the stream; returns the task to
        /// resume.
        mutating func finish(trailer: ByteBuffer?) -> Waiter? {
            guard self.phase == .streaming else { return nil }
            self.phase = .finishing
            self.trailer = trailer
            return self.takeWaiter()
        }

        /// Nothing more is delivered (the client is gone); returns the task to resume.
        mutating func drop() -> Waiter? {
            self.end()
        }

        /// What ``next()`` finds.
        enum NextAction {
            case batch(Batch)
            /// The stream ended.
            case end
            /// Nothing to take: wait (``wait(_:)``).
            case wait
        }

        /// Takes what waits for the response task.
        mutating func next() -> NextAction {
            if self.phase == .ended { return .end }
            if let snapshot = self.snapshot {
                self.snapshot = nil
                return .batch(Batch(snapshot: snapshot))
            }
            if self.buffer != nil || self.trailer != nil {
                defer {
                    self.buffer = nil
                    self.trailer = nil
                }
                return .batch(Batch(bytes: self.buffer, trailer: self.trailer))
            }
            guard self.phase == .finishing else { return .wait }
            self.phase = .ended
            return .end
        }

        /// The response task waits; `false`: it must not, something came meanwhile (resume it).
        mutating func wait(_ waiter: Waiter) -> Bool {
            if self.hasNews { return false }
            self.waiter = waiter
            return true
        }

        private mutating func end() -> Waiter? {
            self.phase = .ended
            self.buffer = nil
            self.snapshot = nil
            self.trailer = nil
            return self.takeWaiter()
        }

        private mutating func takeWaiter() -> Waiter? {
            defer { self.waiter = nil }
            return self.waiter
        }
    }
}
