import Canopy
/// The lifecycle of `Database(url:)`'s connection to its server, as a state machine whose
/// transitions return what the caller must do (close a connection, cancel a timer, open a
/// connection). It holds the connection and the retry timer, so no flag can disagree with them.
/// Generic over both, so that a test can walk every transition without a network or a loop.
///
/// ```
/// idle ──connect──▶ opening ──hello──▶ signingIn ──signedIn──▶ connected
///  ▲  ◀──────────────── drop (closed by the server, a refused credential) ──┘
///  └── retryFired ── waitingToRetry ◀── scheduleRetry ── idle
/// any ──goOffline / server shutdown──▶ offline ──goOnline──▶ idle
/// any ──close──▶ closed (final)
/// ```
struct ConnectionStateMachine<Connection: AnyObject, Timer> {
    enum State {
        /// No connection, none opening and no retry planned.
        case idle
        /// Waiting for the back-off timer before connecting again.
        case waitingToRetry(Timer)
        /// A connection is opening: no hello yet.
        case opening(Connection)
        /// The server said hello; the credential is being obtained. Nothing is sent yet.
        case signingIn(Connection)
        /// Signed in: requests go out.
        case connected(Connection)
        /// `goOffline()`, or the server ended the session for good: no reconnecting until
        /// `goOnline()`.
        case offline
        /// The database closed. Final.
        case closed
    }

    /// What leaving a connection asks of the caller.
    struct Drop {
        /// The connection to close and whose requests in flight to answer (`nil`: there was none).
        var connection: Connection?
        /// It had signed in: `.info/connected` turns false and live data becomes cached data.
        var wasConnected: Bool
        /// The retry timer to cancel, if one was waiting.
        var timer: Timer?
    }

    private(set) var state: State = .idle

    /// The connection opening, signing in or connected.
    var connection: Connection? {
        switch self.state {
        case .opening(let connection), .signingIn(let connection), .connected(let connection): return connection
        case .idle, .waitingToRetry, .offline, .closed: return nil
        }
    }

    /// Signed in: requests may be sent.
    var isConnected: Bool {
        if case .connected = self.state { return true }
        return false
    }

    /// The app (or the server) asked to stay offline, or the database closed.
    var staysOffline: Bool {
        switch self.state {
        case .offline, .closed: return true
        case .idle, .waitingToRetry, .opening, .signingIn, .connected: return false
        }
    }

    /// Whether `connection` is the current one (events of an older connection are ignored).
    func isCurrent(_ connection: Connection) -> Bool { self.connection === connection }

    /// Connecting is wanted: `true` when the caller must open a connection now (and report it
    /// with ``opened(_:)``); the timer to cancel, if a retry was waiting.
    mutating func connect() -> (open: Bool, cancel: Timer?) {
        switch self.state {
        case .idle: return (true, nil)
        case .waitingToRetry(let timer): return (true, timer)
        case .opening, .signingIn, .connected, .offline, .closed: return (false, nil)
        }
    }

    /// The connection ``connect()`` asked for is open(ing).
    mutating func opened(_ connection: Connection) {
        switch self.state {
        case .idle, .waitingToRetry: self.state = .opening(connection)
        case .opening, .signingIn, .connected, .offline, .closed: preconditionFailure("opened a connection while \(self.state)")
        }
    }

    /// The server said hello on `connection`; `false` when it is not the current one.
    mutating func helloReceived(on connection: Connection) -> Bool {
        guard case .opening(let current) = self.state, current === connection else { return false }
        self.state = .signingIn(connection)
        return true
    }

    /// `connection` has its credential; `false` when it is no longer the current one (the caller
    /// then sends nothing).
    mutating func signedIn(on connection: Connection) -> Bool {
        guard case .signingIn(let current) = self.state, current === connection else { return false }
        self.state = .connected(connection)
        return true
    }

    /// Leaves the current connection (closed by the server, a credential the provider could not
    /// give, one the server revoked) and goes idle, ready to retry.
    mutating func drop() -> Drop {
        switch self.state {
        case .opening(let connection), .signingIn(let connection):
            self.state = .idle
            return Drop(connection: connection, wasConnected: false, timer: nil)
        case .connected(let connection):
            self.state = .idle
            return Drop(connection: connection, wasConnected: true, timer: nil)
        case .idle, .waitingToRetry, .offline, .closed:
            return Drop(connection: nil, wasConnected: false, timer: nil)
        }
    }

    /// Plans a reconnection with the timer `makeTimer` starts; only when idle (not offline, not
    /// closed, not already planned or connected). `false`: nothing was planned.
    mutating func scheduleRetry(_ makeTimer: () -> Timer) -> Bool {
        guard case .idle = self.state else { return false }
        self.state = .waitingToRetry(makeTimer())
        return true
    }

    /// The retry timer fired: the caller connects.
    mutating func retryFired() -> Bool {
        guard case .waitingToRetry = self.state else { return false }
        self.state = .idle
        return true
    }

    /// `goOffline()`, or the server's shutdown message: leave the connection and stay offline.
    mutating func goOffline() -> Drop {
        self.leave(to: .offline)
    }

    /// `goOnline()` after `goOffline()`: `true` when the caller must connect.
    mutating func goOnline() -> Bool {
        guard case .offline = self.state else { return false }
        self.state = .idle
        return true
    }

    /// The database closes: leave the connection for good.
    mutating func close() -> Drop {
        self.leave(to: .closed)
    }

    private mutating func leave(to final: State) -> Drop {
        if case .closed = self.state { return Drop(connection: nil, wasConnected: false, timer: nil) }
        var drop = self.drop()
        if case .waitingToRetry(let timer) = self.state { drop.timer = timer }
        self.state = final
        return drop
    }
}
