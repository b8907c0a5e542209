import Canopy
import CanopyConnection
import CanopyCore
import CanopyLoop
import CanopyWire
import Logging

/// Keeps a remote database's local cache in step with a server (loop thread only).
///
/// The local engine's tree is what the app sees: the server's data as last known (`serverRoot`)
/// with the pending local writes applied on top, in order. A local write changes the engine at
/// once (its events fire then) and joins the queue; the server's pushes change `serverRoot`, and
/// the location they touch is recomputed (the engine raises only what really changed). An
/// acknowledgement drops the write from the queue; a refusal drops it too, which reverts it.
// @unchecked Sendable: every property is touched only on the database's loop thread (jobs carry it there).
final class RemoteSync: @unchecked Sendable {
    unowned let core: DatabaseCore
    /// The database's URL, as configured.
    let url: DatabaseURL
    /// Where connections go: ``url``, or the host the server's last reset (`r`) named, until a
    /// connection there fails before its hello (``RemoteSync/followReset(to:)``).
    var endpoint: DatabaseURL
    /// The resets followed since the last hello (a redirect loop ends at
    /// ``RemoteSync/maxResetsWithoutHello``).
    var resetsWithoutHello: [String] = []
    let options: RemoteOptions
    let logger: Logger

    /// The server's data, as last received, at the locations listened to (and acknowledged writes
    /// elsewhere).
    var serverRoot: Node = .empty
    /// Local writes the server has not acknowledged, oldest first.
    var pending = PendingQueue()
    var nextWriteID: UInt64 = 1
    /// Plain server listens by location: the location's whole data.
    var listens: [DatabasePath: RemoteListen] = [:]
    /// Filtered queries' tagged listens (``RemoteQuery``), by query and by tag.
    var queries: [QueryKey: RemoteQuery] = [:]
    var queryTags: [Int64: RemoteQuery] = [:]
    var nextTag: Int64 = 1
    /// The listen each observer (by registration id) holds: a plain one (`params` `nil`) or a query's.
    var observerListens: [UInt64: (path: DatabasePath, params: QueryParams?)] = [:]
    /// Locations whose listen has work waiting for its data (a superset: entries whose listen got
    /// its data are dropped when next looked at), so a local write checks only those.
    var waitingForData: Set<DatabasePath> = []
    /// The queries `keepSynced(true)` holds a listen for.
    var keptSynced: Set<String> = []

    /// The connection, the retry timer and where the connection stands (``ConnectionStateMachine``).
    var lifecycle = ConnectionStateMachine<WireConnection, LoopTimer>()
    var lastSession: String?
    var retryDelay: Duration
    var nextRequest: Int64 = 1
    /// Callbacks for requests in flight on the current connection, by request number.
    var inFlight: [Int64: (ResponseOutcome) -> Void] = [:]
    /// Requests to send (again) once connected: onDisconnect operations and reads.
    var outbox: [OutboxEntry] = []
    var nextOutboxID: UInt64 = 1
    /// The durable cache (`Configuration.persistencePath`), or `nil` in memory.
    var cache: RemoteCache?
    /// The server's clock minus ours, in milliseconds, from the last hello.
    var serverTimeOffset: Int64 = 0

    init(core: DatabaseCore, url: DatabaseURL, options: RemoteOptions) {
        self.core = core
        self.url = url
        self.endpoint = url
        self.options = options
        self.logger = options.logger
        self.retryDelay = options.minimumRetryDelay
    }

    /// The connection opening, signing in or signed in.
    var connection: WireConnection? { self.lifecycle.connection }
    /// Signed in: requests are sent only then.
    var isConnected: Bool { self.lifecycle.isConnected }
    /// `goOffline()` was called, the server ended the session, or the database closed: no
    /// reconnecting.
    var isOfflineByRequest: Bool { self.lifecycle.staysOffline }

    /// Estimated server time, in milliseconds since 1970.
    var serverNow: Int64 { self.core.clock() + self.serverTimeOffset }
}

/// A server listen shared by every observer (and `keepSynced`, and transaction) at its location.
final class RemoteListen {
    /// Observers, pins and transactions using it.
    var users = 0
    /// The request that asked for it on the current connection.
    var requestID: Int64?
    /// The server answered it (with its data) at least once: the location is complete in the cache.
    var hasData = false
    /// Confirmed on the current connection (not from the cache).
    var isLive = false
    /// Work waiting for the location to be complete (observers to register, transactions to run).
    var waiting: [(Result<Void, DatabaseError>) -> Void] = []
    /// Observers registered through it, so a refusal can cancel them.
    var registrations: [EventRegistration] = []
}

/// Makes a request given its number on the connection.
typealias RequestBuilder = (Int64) -> ClientRequest

/// What the server answered a request with.
enum ResponseOutcome {
    case ok(Node)
    case failed(status: String, message: String)
    /// The connection went away before the answer.
    case disconnected
    /// The database was closed before the answer.
    case closed
}

/// A request kept until acknowledged, resent after each reconnect.
struct OutboxEntry {
    let id: UInt64
    let request: RequestBuilder
    let done: (ResponseOutcome) -> Void
}
