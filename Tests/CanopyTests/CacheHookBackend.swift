import CanopyCore

@testable import Canopy

/// An embedded database's backend that says the data at some locations came from a cache, as a
/// client of a server does, so that the metadata it drives is tested without a server. Everything
/// else is the embedded backend's.
// @unchecked Sendable: like the backend it wraps, used on the loop thread only (a manual-loop test
// database, drained from the test's thread).
final class CacheHookBackend: DatabaseBackend, @unchecked Sendable {
    let embedded: EmbeddedBackend
    let fromCache: (DatabasePath) -> Bool

    init(core: DatabaseCore, fromCache: @escaping (DatabasePath) -> Bool) {
        self.embedded = EmbeddedBackend(core: core)
        self.fromCache = fromCache
    }

    func isFromCache(_ path: DatabasePath) -> Bool { self.fromCache(path) }

    var isRemote: Bool { self.embedded.isRemote }
    var tracksTransactionReads: Bool { self.embedded.tracksTransactionReads }
    var isSettled: Bool { self.embedded.isSettled }

    func apply(
        _ write: WriteOperation, now: Int64?, completion: (@Sendable (DatabaseError?) -> Void)?, applied: (() -> Void)?
    ) {
        self.embedded.apply(write, now: now, completion: completion, applied: applied)
    }

    func commitOverlapping(_ writes: [WriteOperation], completion: @escaping @Sendable (DatabaseError?) -> Void) {
        self.embedded.commitOverlapping(writes, completion: completion)
    }

    func runTransaction(_ body: TransactionBody, in database: Database) { self.embedded.runTransaction(body, in: database) }

    func transaction(
        at path: DatabasePath, in database: Database,
        update: @escaping @Sendable (MutableData) throws(DatabaseError) -> TransactionResult,
        completion: @escaping @Sendable (DatabaseError?, Bool, DataSnapshot?) -> Void
    ) {
        self.embedded.transaction(at: path, in: database, update: update, completion: completion)
    }

    func onDisconnect(_ write: WriteOperation?, at path: DatabasePath, done: @escaping (DatabaseError?) -> Void) {
        self.embedded.onDisconnect(write, at: path, done: done)
    }

    func get(at path: DatabasePath, params: QueryParams, _ done: @escaping (Result<Node, DatabaseError>) -> Void) {
        self.embedded.get(at: path, params: params, done)
    }

    func register(_ registration: EventRegistration, at path: DatabasePath, params: QueryParams, register: @escaping () -> Void) {
        self.embedded.register(registration, at: path, params: params, register: register)
    }

    func unregistered(_ registration: EventRegistration) { self.embedded.unregistered(registration) }

    func setKeepSynced(_ keepSynced: Bool, at path: DatabasePath, params: QueryParams) {
        self.embedded.setKeepSynced(keepSynced, at: path, params: params)
    }

    func goOffline() { self.embedded.goOffline() }

    func goOnline() { self.embedded.goOnline() }

    func close() { self.embedded.close() }
}
