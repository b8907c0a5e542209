/// Judges whether a client reads what is sent to it: the state machine behind ``StallWatch``.
///
/// A connection with something written but not yet taken by its client is *draining*; every
/// write the client takes is progress. A periodic tick, every timeout, runs while the connection
/// drains: a tick that finds no progress since the tick before cuts the client off. So a client
/// is cut off between one and two timeouts after it last took anything, however large what it
/// was sent, and a client that keeps reading, however slowly, is never cut off by the clock.
struct StallClock: Equatable {
    enum Phase: Equatable {
        /// Nothing waits for the client.
        case idle
        /// Something waits for the client; `progressed`: it took something since the last tick.
        case draining(progressed: Bool)
        /// Cut off: nothing more happens.
        case stalled
    }

    /// What the owner does after a transition.
    enum Action: Equatable {
        case none
        /// Schedule ``tick()`` one timeout from now.
        case arm
        /// Cut the client off.
        case cutOff
    }

    private(set) var phase = Phase.idle
    /// A tick is scheduled.
    private(set) var armed = false

    /// Something was written for the client.
    mutating func queued() -> Action {
        switch self.phase {
        case .stalled:
            return .none
        case .idle:
            // A fresh start counts as progress: the client gets a whole timeout.
            self.phase = .draining(progressed: true)
        case .draining:
            break
        }
        return self.arm()
    }

    /// The client took a write; `drained`: nothing waits for it any more.
    mutating func progressed(drained: Bool) -> Action {
        switch self.phase {
        case .stalled:
            return .none
        case .idle, .draining:
            self.phase = drained ? .idle : .draining(progressed: true)
            return drained ? .none : self.arm()
        }
    }

    /// The scheduled tick.
    mutating func tick() -> Action {
        self.armed = false
        switch self.phase {
        case .idle, .stalled:
            return .none
        case .draining(progressed: true):
            self.phase = .draining(progressed: false)
            return self.arm()
        case .draining(progressed: false):
            self.phase = .stalled
            return .cutOff
        }
    }

    /// Ends the watch (the connection closed): no tick does anything any more.
    mutating func stop() {
        self.phase = .stalled
    }

    private mutating func arm() -> Action {
        guard !self.armed else { return .none }
        self.armed = true
        return .arm
    }
}
