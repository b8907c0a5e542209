import Canopy

extension DatabaseCore {
    /// A remote write was applied to the cache and awaits the server. Loop thread only.
    func pendingWritesBegan(_ write: PendingWrite) {
        write.token = self.pendingWrites.begin(write.write)
    }

    /// The server answered a remote write. Loop thread only.
    func pendingWritesEnded(_ write: PendingWrite) {
        guard let token = write.token else { return }
        write.token = nil
        self.pendingWrites.end(token)
    }
}

extension DatabaseCore {
    /// The client of a server behind this database, if it is one (for events the connection
    /// delivers to the loop). Loop thread only.
    var remote: RemoteSync? { self.backend as? RemoteSync }
}
