public import Canopy
import CanopyConnection
import CanopyCore

extension Database {
    /// A database that is a client of a Canopy (or Firebase Realtime Database) server: the same
    /// API as an embedded database, over the SDKs' WebSocket protocol, offline-first.
    ///
    /// `url` names the server and the namespace: `http://127.0.0.1:9000?ns=blog`,
    /// `https://NAME.firebaseio.com`, or a `ws:`/`wss:` URL. The database keeps a local cache: a
    /// write changes it at once (observers fire then) and is sent to the server in order, at once
    /// when connected, else after reconnecting; its completion reports the server's answer, and a
    /// refused write is reverted (observers see it go). Observers start once the server has sent
    /// their location's data. The connection is retried with back-off until `close()` or
    /// `goOffline()`. See the Canopy documentation's *Remote database* article.
    ///
    /// ```swift
    /// import CanopyRemote
    ///
    /// var configuration = Database.Configuration()
    /// configuration.authToken = adminToken
    /// let db = try Database(url: "http://127.0.0.1:9000?ns=blog", configuration: configuration)
    /// db.reference(withPath: "posts").observe(.childAdded) { print($0.key ?? "") }
    /// ```
    ///
    /// - Throws: `DatabaseError` for a URL that names no server or namespace, or when the loop
    ///   (or the persistent cache) cannot start.
    public convenience init(url: String, configuration: Configuration = Configuration()) throws(DatabaseError) {
        let parsed = try DatabaseURL(url)
        try self.init(configuration: configuration)
        let remote = RemoteSync(core: self.core, url: parsed, options: RemoteOptions(configuration))
        try remote.openPersistence()
        self.core.install(remote)
        self.core.perform { [core = self.core] in
            core.setInfo(connected: false, serverTimeOffset: 0)
            remote.restoreCache()
            remote.connect()
        }
    }
}
