import CanopyWire
import Synchronization

extension WireSession {
    /// Watches the expiry of the connection's user token, if it has one: when it passes, the
    /// client is told (`ac` with `expired_token`; the SDKs then send a fresh token), the
    /// connection goes on unauthenticated, and its listens that needed the token are revoked
    /// (`c`), without waiting for the client's next request. A new identity replaces the timer.
    func watchExpiry() {
        let identity = self.identity
        guard case .user(_, let expires?) = identity else {
            self.stopWatchingExpiry()
            return
        }
        let timer = Task(executorPreference: self.taskExecutor) { [self] in
            let delay = max(0, expires - WireConnection.now())
            do { try await Task.sleep(for: .milliseconds(delay)) } catch { return }
            await self.expireIdentity(ifExpiredAt: expires)
        }
        self.expiryTimer.withLock { current in
            current?.cancel()
            current = timer
        }
    }

    /// Stops the expiry timer (the connection closed, or it has no user token any more).
    func stopWatchingExpiry() {
        self.expiryTimer.withLock { current in
            current?.cancel()
            current = nil
        }
    }

    /// Ends the connection's user identity if its token expired by `now` (ms): `ac`, then
    /// unauthenticated, with the listens that needed it revoked.
    func expireIdentity(ifExpiredAt now: Int64) async {
        let identity = self.identity
        guard identity.hasExpired(by: now), self.replaceIdentity(identity, with: .anonymous) else { return }
        self.outbox.send(ServerMessage.authRevoked(status: "expired_token", reason: "The auth token has expired."))
        await WireRequests.revokeListens(of: self, changedFrom: identity, to: .anonymous)
    }
}
