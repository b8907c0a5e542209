import NIOCore

extension EventStream {
    /// One stream's queue over the shared lifecycle and byte accounting (``OutboxCore``), as a
    /// state machine whose transitions return what the caller does (resume the response task,
    /// schedule a deferred wake, close an overflowing connection). Generic over the waiting
    /// response task, so that a test can walk every transition without tasks.
    ///
    /// ```
    /// streaming ──finish──▶ finishing ──next (queue taken)──▶ ended
    ///     └──── drop, overflow ─────────────────────────────▶ ended (final)
    /// ```
    ///
    /// The phases are the core's (`open`, `finishing`, `closed`); nobody waits for a finish: the
    /// response task takes what is left, then the end.
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

        /// The lifecycle and the bytes of the events queued (a long initial `put` is not counted).
        private(set) var core: OutboxCore<Waiter>
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
        /// The coalescing interval in nanoseconds; `nil` wakes at once.
        let interval: UInt64?

        /// - Parameter limit: The most bytes of events that may wait.
        init(limit: OutboxLimit, interval: UInt64?) {
            self.core = OutboxCore(limit: limit)
            self.interval = interval
        }

        /// The core's phase, as a stream's.
        var phase: Phase {
            switch self.core.phase {
            case .open: .streaming
            case .finishing: .finishing
            case .closed: .ended
            }
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
            switch self.core.admit(bytes.readableBytes, answer: false) {
            case .refused: return .none
            case .overflow: return .overflow(self.end())
            case .admitted: self.core.queued(bytes.readableBytes, answer: false)
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
            // The end waits for the response task to take it: never drained here.
            _ = self.core.finish(nil, drained: false)
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
                self.core.taken(self.buffer?.readableBytes ?? 0, answer: false)
                defer {
                    self.buffer = nil
                    self.trailer = nil
                }
                return .batch(Batch(bytes: self.buffer, trailer: self.trailer))
            }
            guard self.phase == .finishing else { return .wait }
            _ = self.core.idle(drained: true)
            return .end
        }

        /// The response task waits; `false`: it must not, something came meanwhile (resume it).
        mutating func wait(_ waiter: Waiter) -> Bool {
            if self.hasNews { return false }
            self.waiter = waiter
            return true
        }

        private mutating func end() -> Waiter? {
            _ = self.core.close()
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
