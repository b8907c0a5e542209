extension LogFollower {
    /// A follower's lifecycle as a state machine whose transitions return what the caller does
    /// (start a catch-up, run it again, resume waiters). Generic over the waiters, so that a
    /// test walks every transition without PostgreSQL.
    ///
    /// ```
    /// idle ──wake──▶ catchingUp ──finished──▶ idle
    ///                 │   ▲  │
    ///          wake ──┘   │  └──finished, woken meanwhile──▶ catchingUp (again)
    ///   (again)           └──────────────────────────────┘
    /// catchingUp ──failed──▶ idle (the next wake retries)
    /// any ──close──▶ closed (final: waiters get `false`, wakes do nothing)
    /// ```
    ///
    /// Positions: `applied` is the last record applied here, `known` the newest known committed
    /// (from notifications and forwarded writes); waiters wait for a position to be applied.
    struct StateMachine<Waiter> {
        enum Phase: Equatable {
            case idle
            /// A catch-up runs; `again`: woken while it ran (it runs once more).
            case catchingUp(again: Bool)
            case closed
        }

        /// What ``wait(for:_:)`` tells the caller.
        enum WaitAction {
            /// Already applied (`true`), or the follower is closed (`false`): answer now.
            case answer(Bool)
            /// Kept: it is returned by the ``advance(to:)`` or ``close()`` that settles it.
            case wait
        }

        private(set) var phase: Phase = .idle
        private(set) var applied: Int64
        private(set) var known: Int64
        private var waiters: [(sequence: Int64, waiter: Waiter)] = []

        init(applied: Int64) {
            self.applied = applied
            self.known = applied
        }

        /// Records known committed and not applied yet.
        var lag: Int64 { max(0, self.known - self.applied) }

        /// Woken (`committed`: a position known committed): returns whether to start a catch-up.
        mutating func wake(committed: Int64?) -> Bool {
            if let committed { self.known = max(self.known, committed) }
            switch self.phase {
            case .idle:
                self.phase = .catchingUp(again: false)
                return true
            case .catchingUp:
                self.phase = .catchingUp(again: true)
                return false
            case .closed:
                return false
            }
        }

        /// A catch-up read to the head: returns whether to run another (woken meanwhile).
        mutating func finished() -> Bool {
            guard case .catchingUp(let again) = self.phase else { return false }
            self.phase = again ? .catchingUp(again: false) : .idle
            return again
        }

        /// A catch-up failed: idle until the next wake.
        mutating func failed() {
            if case .catchingUp = self.phase { self.phase = .idle }
        }

        /// Records up to `sequence` are applied: returns the waiters now satisfied.
        mutating func advance(to sequence: Int64) -> [Waiter] {
            self.applied = max(self.applied, sequence)
            self.known = max(self.known, sequence)
            let ready = self.waiters.filter { $0.sequence <= self.applied }.map(\.waiter)
            self.waiters.removeAll { $0.sequence <= self.applied }
            return ready
        }

        /// `waiter` waits for record `sequence` to be applied.
        mutating func wait(for sequence: Int64, _ waiter: Waiter) -> WaitAction {
            if self.applied >= sequence { return .answer(true) }
            if self.phase == .closed { return .answer(false) }
            self.waiters.append((sequence, waiter))
            return .wait
        }

        /// Stops for good: returns the waiters (to be told `false`).
        mutating func close() -> [Waiter] {
            self.phase = .closed
            defer { self.waiters = [] }
            return self.waiters.map(\.waiter)
        }
    }
}
