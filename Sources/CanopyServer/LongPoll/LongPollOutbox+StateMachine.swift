extension LongPollOutbox {
    /// A long-poll connection's polls over the shared lifecycle and byte accounting
    /// (``OutboxCore``), as a state machine whose transitions return what the caller does (answer
    /// a poll, arm a timer, resume ``LongPollOutbox/finish()`` callers, end the session). What is
    /// queued is the caller's; the machine is told whether anything is (`queued`, `drained`).
    /// Generic over the held poll and the waiting callers, so that a test can walk every
    /// transition without requests or timers.
    ///
    /// ```
    /// waiting ──poll, nothing queued──▶ holding ──message, hold ended──▶ waiting
    ///    │  ▲                               │
    ///    │  └──poll, something queued       └──poll: the held one answered, the new one held
    ///    └──no poll for a timeout (idle, or stalled with messages queued)──▶ closed
    /// any ──close (disconnect, overflow, shutdown), finish once drained──▶ closed (final)
    /// ```
    ///
    /// At most one poll is held: the SDK keeps one request open to receive, and opens another
    /// to send; the new one answers the old. Independently, ``finish(_:drained:)`` stops taking
    /// messages (the core finishes): what is queued still goes to the polls, and polls are
    /// answered until the session closes.
    struct StateMachine<Poll, Waiter> {
        enum Phase {
            /// No poll is held; the client last came (or its last poll was answered) at `since`
            /// (monotonic nanoseconds).
            case waiting(since: UInt64)
            /// A poll is held until a message comes or its hold ends; `token` names the hold.
            case holding(Poll, token: UInt64)
            /// The session is over. Final.
            case closed
        }

        /// What a transition asks of the caller, in order.
        enum Action {
            /// Answer `poll` with what is queued (perhaps nothing).
            case answer(Poll)
            /// Answer `poll` with the end of the session.
            case refuse(Poll)
            /// Arm the hold timer of hold `token` (``holdEnded(_:now:)``).
            case hold(token: UInt64)
            /// Arm the idle check (``check(now:queued:)``) for this many nanoseconds from now.
            case check(after: UInt64)
        }

        typealias FinishAction = OutboxCore<Waiter>.FinishAction

        private(set) var phase: Phase
        /// Whether messages are taken, the ``LongPollOutbox/finish()`` callers and the byte
        /// accounting.
        var core: OutboxCore<Waiter>
        private var nextToken: UInt64 = 0
        /// Nanoseconds a session may go without a poll.
        let idle: UInt64
        /// Nanoseconds messages may wait for a poll (the slow-client timeout).
        let stall: UInt64

        init(
            now: UInt64, idle: UInt64, stall: UInt64, limit: OutboxLimit = OutboxLimit(.max),
            answerLimit: OutboxLimit = OutboxLimit(.max)
        ) {
            self.phase = .waiting(since: now)
            self.core = OutboxCore(limit: limit, answerLimit: answerLimit)
            self.idle = idle
            self.stall = stall
        }

        /// The idle check armed whenever the outbox starts waiting for a poll.
        var firstCheck: Action { .check(after: min(self.idle, self.stall)) }

        /// Messages are taken.
        var accepts: Bool { self.core.accepts }

        /// A poll arrived at `now`; `queued`: messages wait for it.
        mutating func poll(_ poll: Poll, now: UInt64, queued: Bool) -> [Action] {
            switch self.phase {
            case .closed:
                return [.refuse(poll)]
            case .waiting:
                if queued {
                    self.phase = .waiting(since: now)
                    return [.answer(poll), self.firstCheck]
                }
                return [self.hold(poll)]
            case .holding(let old, _):
                // The client opened another request (to send): the held one goes back now, the
                // new one is held in its place.
                return [.answer(old), self.hold(poll)]
            }
        }

        private mutating func hold(_ poll: Poll) -> Action {
            self.nextToken += 1
            self.phase = .holding(poll, token: self.nextToken)
            return .hold(token: self.nextToken)
        }

        /// A message was queued at `now`: a held poll takes it.
        mutating func queued(now: UInt64) -> [Action] {
            guard case .holding(let poll, _) = self.phase else { return [] }
            self.phase = .waiting(since: now)
            return [.answer(poll), self.firstCheck]
        }

        /// Hold `token` ended at `now`: the poll goes back (empty), and the client opens another.
        mutating func holdEnded(_ token: UInt64, now: UInt64) -> [Action] {
            guard case .holding(let poll, let held) = self.phase, held == token else { return [] }
            self.phase = .waiting(since: now)
            return [.answer(poll), self.firstCheck]
        }

        /// What ``check(now:queued:)`` found.
        enum Check {
            case none
            /// Check again after this many nanoseconds.
            case again(after: UInt64)
            /// The client stopped polling: the session is over (`slow`: messages were waiting
            /// for it); resume these ``LongPollOutbox/finish()`` callers.
            case expired(slow: Bool, resume: [Waiter])
        }

        /// The idle check at `now`; `queued`: messages wait for a poll.
        mutating func check(now: UInt64, queued: Bool) -> Check {
            guard case .waiting(let since) = self.phase else { return .none }
            let deadline = since &+ (queued ? min(self.idle, self.stall) : self.idle)
            guard now >= deadline else { return .again(after: deadline - now) }
            self.phase = .closed
            return .expired(slow: queued, resume: self.core.close())
        }

        /// A poll took messages; `drained`: nothing is queued now. A finishing outbox that is
        /// drained is done: returns the ``LongPollOutbox/finish()`` callers to resume.
        mutating func taken(drained: Bool) -> [Waiter] {
            self.core.idle(drained: drained)
        }

        /// Stops taking messages; `waiter` waits until what is queued went to a poll. A session
        /// not over keeps its queue (drained, or still going to the polls).
        mutating func finish(_ waiter: Waiter, drained: Bool) -> FinishAction {
            if case .closed = self.phase { return .resume(drop: true) }
            return self.core.finish(waiter, drained: drained).resumesNow ? .resume(drop: false) : .wait
        }

        /// The session ends (the client left, its outbox overflowed, the server shuts down):
        /// returns the held poll, to answer with the end, and the ``LongPollOutbox/finish()``
        /// callers to resume. The caller drops what is queued.
        mutating func close() -> (held: Poll?, resume: [Waiter]) {
            let held: Poll? = if case .holding(let poll, _) = self.phase { poll } else { nil }
            self.phase = .closed
            return (held, self.core.close())
        }
    }
}
