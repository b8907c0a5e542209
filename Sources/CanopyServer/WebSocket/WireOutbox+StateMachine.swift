import NIOCore

extension WireOutbox {
    /// The lifecycle of an outbox and of its write jobs, as a state machine whose transitions
    /// return what the caller does (run a write job now or later, resume ``WireOutbox/finish()``
    /// callers, stop the stall watch, drop what is queued). What is queued is the caller's; the
    /// machine is told whether anything is (`queued`, `drained`). Generic over the channel, the
    /// stall watch and the waiting callers, so that a test can walk every transition without a
    /// channel.
    ///
    /// ```
    /// detached ──attach──▶ open ──finish (busy)──▶ finishing ──idle──▶ closed
    ///    └─────────────────── finish (idle) ──────────────────────────▶ closed
    /// any ──overflow, cut off, write failure──▶ closed (final)
    /// ```
    ///
    /// Independently, a write job may be queued on the event loop (`scheduled`) and one may wait
    /// for the end of the coalescing interval (`deferred`).
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

        private(set) var phase = Phase.detached
        /// Judges the client's progress, from ``attach(_:watch:queued:)`` on.
        private(set) var watch: Watch?
        /// A write job is queued on the event loop.
        private(set) var scheduled = false
        /// A write job is scheduled for the end of the coalescing interval.
        private(set) var deferred = false
        /// When the last write job wrote something (monotonic nanoseconds).
        private var lastWrite: UInt64 = 0
        /// ``WireOutbox/finish()`` callers, waiting for everything to be written.
        private var waiters: [Waiter] = []
        /// Coalescing interval in nanoseconds; 0 writes every push at once.
        let coalescing: UInt64

        init(coalescing: UInt64) {
            self.coalescing = coalescing
        }

        /// Messages are taken.
        var accepts: Bool {
            switch self.phase {
            case .detached, .open: true
            case .finishing, .closed: false
            }
        }

        /// Starts writing to `channel`; returns it when a write job is to run now (something was
        /// queued before). Ignored unless detached.
        mutating func attach(_ channel: Channel, watch: Watch?, queued: Bool) -> Channel? {
            guard case .detached = self.phase else { return nil }
            self.phase = .open(channel)
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
            self.phase = .closed
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
            guard drained, !self.scheduled else { return [] }
            if case .finishing = self.phase { self.phase = .closed }
            defer { self.waiters = [] }
            return self.waiters
        }

        /// What ``finish(_:drained:)`` asks of the caller.
        enum FinishAction {
            /// Resume the caller now, and drop what is queued (nothing will be written).
            case resume(drop: Bool)
            /// The caller waits until everything is written.
            case wait
        }

        /// Stops taking messages; `waiter` waits until what is queued was written.
        mutating func finish(_ waiter: Waiter, drained: Bool) -> FinishAction {
            let idle = drained && !self.scheduled
            switch self.phase {
            case .detached:
                self.phase = .closed
                return .resume(drop: true)
            case .open(let channel):
                if idle {
                    self.phase = .closed
                    return .resume(drop: true)
                }
                self.phase = .finishing(channel)
            case .finishing:
                if idle { return .resume(drop: false) }
            case .closed:
                if idle { return .resume(drop: true) }
            }
            self.waiters.append(waiter)
            return .wait
        }

        /// Too much waits for the client, or the stall watch cut it off: closes the outbox.
        /// Returns the ``WireOutbox/finish()`` callers to resume and the watch to stop; the
        /// caller drops what is queued.
        mutating func close() -> (resume: [Waiter], watch: Watch?) {
            self.phase = .closed
            defer { self.waiters = [] }
            return (self.waiters, self.watch)
        }
    }
}
