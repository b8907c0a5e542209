import CanopyConnection
import CanopyCore
import Logging

extension RemoteSync {
    /// The most resets followed in a row without a hello; one more is a redirect loop.
    static let maxResetsWithoutHello = 10

    /// The server's reset (`r`, sent instead of its hello or on an open connection): connections
    /// go to `host` from now on, and the client reconnects there at once, without back-off, as the
    /// SDKs do. Requests in flight are answered as after any lost connection; queued writes,
    /// listens and onDisconnect operations go to the new host once it says hello, as after a
    /// reconnect.
    ///
    /// A reset that names no valid host, and the eleventh reset in a row without a hello (a
    /// redirect loop), are logged as errors; the client then goes back to the database URL's host
    /// and retries with back-off, as after a lost connection.
    func followReset(to host: String) {
        let from = self.endpoint.authority
        self.dropConnection()
        let target: DatabaseURL
        do throws(DatabaseError) {
            target = try self.url.redirected(to: host)
        } catch {
            self.logger.error("canopy: \(error.message) (sent by \(from)); reconnecting to \(self.url.authority) with back-off")
            self.endpoint = self.url
            self.scheduleReconnect()
            return
        }
        self.resetsWithoutHello.append(target.authority)
        guard self.resetsWithoutHello.count <= Self.maxResetsWithoutHello else {
            let chain = self.resetsWithoutHello.joined(separator: " → ")
            self.logger.error(
                "canopy: redirect loop: \(self.resetsWithoutHello.count) resets in a row without a hello (to \(chain)); not following this one: back to \(self.url.authority), retrying with back-off"
            )
            self.resetsWithoutHello = []
            self.endpoint = self.url
            self.scheduleReconnect()
            return
        }
        self.logger.info("canopy: the server at \(from) redirects this client to \(target.authority)")
        self.endpoint = target
        self.connect()
    }

    /// The connection closed or could not open: reconnect with back-off. When it was to a host a
    /// reset named and it never said hello, the client goes back to the database URL's host (as
    /// the JS SDK forgets a cached host it cannot reach).
    func connectionLost() {
        if case .opening = self.lifecycle.state, self.endpoint != self.url {
            self.logger.info("canopy: \(self.endpoint.authority), named by a reset, did not answer; back to \(self.url.authority)")
            self.endpoint = self.url
        }
        self.dropConnection()
        self.scheduleReconnect()
    }
}
