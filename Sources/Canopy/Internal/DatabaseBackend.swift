import CanopyCore

/// What an embedded database and a client of a server do differently: how a write the app makes
/// is made durable or acknowledged, transactions, onDisconnect, one-shot reads, when an observer
/// may start, and going offline. The rest (the tree, observers, queries, triggers, metadata) is
/// ``DatabaseCore``'s, shared by both.
///
/// ``EmbeddedBackend`` keeps the data in memory or in the journal; `RemoteSync` (module
/// CanopyRemote) keeps a cache in step with a server. Every requirement is called on the loop
/// thread, but for ``isRemote``.
package protocol DatabaseBackend: AnyObject, Sendable {
    /// Whether the database is a client of a server. Any thread (fixed before the first job).
    var isRemote: Bool { get }

    /// Applies a write the app made, its server values resolved at `now` (the clock's time when
    /// `nil`), and delivers its events; `completion` gets the outcome once the write is durable
    /// (embedded) or answered by the server (remote). `applied` runs once it changed the tree
    /// (embedded only).
    func apply(
        _ write: WriteOperation, now: Int64?, completion: (@Sendable (DatabaseError?) -> Void)?, applied: (() -> Void)?)

    /// Commits `writes`, made one after another and overlapping (more than one), in one go.
    func commitOverlapping(_ writes: [WriteOperation], completion: @escaping @Sendable (DatabaseError?) -> Void)

    /// Whether a ``Transaction`` keeps the locations it reads (a server checks their hashes).
    var tracksTransactionReads: Bool { get }

    /// Runs a ``Database/runTransaction(_:)`` block and commits its writes; the outcome is
    /// reported through `body`.
    func runTransaction(_ body: TransactionBody, in database: Database)

    /// Runs a ``DatabaseReference`` transaction at `path`: `update` on the data there, the result
    /// committed; `completion` gets the error, whether it committed, and the data after.
    func transaction(
        at path: DatabasePath, in database: Database,
        update: @escaping @Sendable (MutableData) throws(DatabaseError) -> TransactionResult,
        completion: @escaping @Sendable (DatabaseError?, Bool, DataSnapshot?) -> Void)

    /// Hands an onDisconnect operation (`nil`: cancel those at `path`) to the server; `done` gets
    /// its answer, or why there is none.
    func onDisconnect(_ write: WriteOperation?, at path: DatabasePath, done: @escaping (DatabaseError?) -> Void)

    /// `getData()`: the query's data now, or once the server sent it. `done` runs once.
    func get(at path: DatabasePath, params: QueryParams, _ done: @escaping (Result<Node, DatabaseError>) -> Void)

    /// Runs `register` (which registers an observer of the query `params` at `path` and delivers
    /// its initial events) once the data there may be shown.
    func register(_ registration: EventRegistration, at path: DatabasePath, params: QueryParams, register: @escaping () -> Void)

    /// An observer was removed or ended.
    func unregistered(_ registration: EventRegistration)

    /// ``DatabaseQuery/keepSynced(_:)`` beyond pinning the query's index.
    func setKeepSynced(_ keepSynced: Bool, at path: DatabasePath, params: QueryParams)

    /// Whether the data at `path` came from a cache rather than the server.
    func isFromCache(_ path: DatabasePath) -> Bool

    /// ``Database/goOffline()``.
    func goOffline()

    /// ``Database/goOnline()``.
    func goOnline()

    /// Nothing in flight: no write unanswered, no listen or request waiting for the server.
    var isSettled: Bool { get }

    /// The database is closing: end what is in flight.
    func close()
}
