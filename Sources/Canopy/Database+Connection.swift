import CanopyCore

extension Database {
    /// Whether this database is a client of a server (`Database(url:)`, module `CanopyRemote`).
    public var isRemote: Bool { self.core.backend.isRemote }

    /// Closes the connection to the server and stays offline (writes queue up, observers keep
    /// the cache) until ``goOnline()``. Does nothing on an embedded database.
    public func goOffline() {
        self.core.perform { [core = self.core] in core.backend.goOffline() }
    }

    /// Reconnects after ``goOffline()``. Does nothing on an embedded database.
    public func goOnline() {
        self.core.perform { [core = self.core] in core.backend.goOnline() }
    }
}

extension Database {
    /// For tests driving the loop: whether a remote database is connected with nothing in flight
    /// (no write unacknowledged, no listen or request unanswered). Always true when embedded.
    /// Loop thread only (the draining thread in `.manual` mode).
    package var isRemoteSettled: Bool { self.core.backend.isSettled }
}
