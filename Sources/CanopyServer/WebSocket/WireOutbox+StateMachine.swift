import NIOCore

extension WireOutbox {
    /// A WebSocket outbox's write jobs over the shared lifecycle and byte accounting
    /// (``OutboxCore``), as a state machine whose transitions return what the caller does (run a
    /// write job now or later, resume ``WireOutbox/finish()`` callers, stop the stall watch, drop
    /// what is queued). What is queued is the caller's; the machine is told whether anything is
    /// (`queued`, `drained`). Generic over the channel, the stall watch and the waiting callers,
    /// so that a test can walk every transition without a channel.
    ///
    /// ```
    /// detached ──attach──▶ open ──finish (busy)──▶ finishing ──idle──▶ closed
    ///    └─────────────────── finish (idle) ──────────────────────────▶ closed
    /// any ──overflow, cut off, write failure──▶ closed (final)
    /// ```
    ///
    /// `open`, `finishing` and `closed` are the core's phases; `detached` is an open core with
    /// no channel yet. Independently, a write job may be queued on the event loop (`scheduled`)
    /// and one may wait for the end of the coalescing interval (`deferred`).
    struct StateMachine<Channel, Watch, Waiter> {
        enum Phase {
            /// Messages are taken; there is no channel yet.
            case detached
            /// Messages are taken and written.
            case open(Channel)
            /// No more messages are taken; what is queued is still written.
            case finishing(Channel)
            /// No more messages are taken or written. Final.
            case closed
        }

        typealias FinishAction = OutboxCore<Waiter>.FinishAction

        /// The lifecycle, the ``WireOutbox/finish()`` callers and the byte accounting.
        var core: OutboxCore<Waiter>
        /// Where messages are written, from ``attach(_:watch:queued:)`` on.
        private var channel: Channel?
        /// Judges the client's progress, from ``attach(_:watch:queued:)`` on.
        private(set) var watch: Watch?
        /// A write job is queued on the event loop.
        private(set) var scheduled = false
        /// A write job is scheduled for the end of the coalescing interval.
        private(set) var deferred = false
        /// When the last write job wrote something (monotonic nanoseconds).
        private var lastWrite: UInt64 = 0
        /// Coalescing interval in nanoseconds; 0 writes every push at once.
        let coalescing: UInt64

        init(coalescing: UInt64, limit: OutboxLimit = OutboxLimit(.max), answerLimit: OutboxLimit = OutboxLimit(.max)) {
            self.coalescing = coalescing
            self.core = OutboxCore(limit: limit, answerLimit: answerLimit)
        }

        var phase: Phase {
            switch (self.core.phase, self.channel) {
            case (.closed, _): .closed
            case (_, nil): .detached
            case (.open, let channel?): .open(channel)
            case (.finishing, let channel?): .finishing(channel)
            }
        }

        /// Messages are taken.
        var accepts: Bool { self.core.accepts }

        /// Starts writing to `channel`; returns it when a write job is to run now (something was
        /// queued before). Ignored unless detached.
        mutating func attach(_ channel: Channel, watch: Watch?, queued: Bool) -> Channel? {
            guard case .detached = self.phase else { return nil }
            self.channel = channel
            self.watch = watch
            guard queued, !self.scheduled else { return nil }
            self.scheduled = true
            return channel
        }

        /// What ``queued(push:now:)`` asks of the caller.
        enum JobAction {
            case none
            /// Run a write job on the channel's event loop now.
            case now(Channel)
            /// Run a deferred write job after this long.
            case later(Channel, TimeAmount)
        }

        /// A message was queued (`push`: a data push, which may wait for the coalescing
        /// interval). `now`: the monotonic clock, read only when coalescing.
        mutating func queued(push: Bool, now: @autoclosure () -> UInt64) -> JobAction {
            guard case .open(let channel) = self.phase, !self.scheduled else { return .none }
            if push && self.coalescing > 0 {
                if self.deferred { return .none }
                let now = now()
                let due = self.lastWrite &+ self.coalescing
                if now < due {
                    self.deferred = true
                    return .later(channel, .nanoseconds(Int64(due - now)))
                }
            }
            self.scheduled = true
            return .now(channel)
        }

        /// A write job starts (`deferred`: the one of the coalescing interval).
        mutating func jobStarted(deferred: Bool) {
            if deferred { self.deferred = false } else { self.scheduled = false }
        }

        /// The job wrote something at `now`.
        mutating func wrote(at now: UInt64) {
            self.lastWrite = now
        }

        /// A write failed: the connection is gone, nothing more will be written. The caller
        /// drops what is queued.
        mutating func failed() {
            self.core.fail()
        }

        /// A write reached the socket (or failed). `queued`: more waits to be written;
        /// `drained`: nothing is queued or in flight. Returns the channel to run a write job on
        /// now, or else the ``WireOutbox/finish()`` callers to resume (see ``idle(drained:)``).
        mutating func written(queued: Bool, drained: Bool) -> (schedule: Channel?, resume: [Waiter]) {
            let channel: Channel? =
                switch self.phase {
                case .open(let channel), .finishing(let channel): channel
                case .detached, .closed: nil
                }
            if queued, let channel, !self.scheduled, !self.deferred {
                self.scheduled = true
                return (channel, [])
            }
            return (nil, self.idle(drained: drained))
        }

        /// Nothing more to write for now: once nothing is queued, in flight or scheduled
        /// (`drained`, and no job queued), returns the ``WireOutbox/finish()`` callers, and a
        /// finishing outbox is closed.
        mutating func idle(drained: Bool) -> [Waiter] {
            self.core.idle(drained: drained && !self.scheduled)
        }

        /// Stops taking messages; `waiter` waits until what is queued was written. An outbox
        /// never attached closes at once: what it queued is dropped.
        mutating func finish(_ waiter: Waiter, drained: Bool) -> FinishAction {
            let detached = if case .detached = self.phase { true } else { false }
            return self.core.finish(waiter, drained: detached || (drained && !self.scheduled))
        }

        /// Too much waits for the client, or the stall watch cut it off: closes the outbox.
        /// Returns the ``WireOutbox/finish()`` callers to resume and the watch to stop; the
        /// caller drops what is queued.
        mutating func close() -> (resume: [Waiter], watch: Watch?) {
            (self.core.close(), self.watch)
        }
    }
}
