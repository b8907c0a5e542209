import Testing

@testable import CanopyRemote

/// Every transition of `Database(url:)`'s connection lifecycle (``ConnectionStateMachine``), with
/// stand-in connections and timers: connecting, hello, signing in, drops and retries, going
/// offline and online, the server's shutdown, and closing.
@Suite("Connection state machine")
struct ConnectionStateMachineTests {
    final class Connection {}
    final class Timer {}
    typealias Machine = ConnectionStateMachine<Connection, Timer>

    /// A machine connected on `connection`.
    func connected(_ connection: Connection) -> Machine {
        var m = Machine()
        _ = m.connect()
        m.opened(connection)
        _ = m.helloReceived(on: connection)
        _ = m.signedIn(on: connection)
        return m
    }

    /// A machine connected on a fresh connection, then left by `leave` (a drop, going offline or
    /// closing), and what `leave` returned: the connection is handed back, as one that had signed in.
    func leftAfterConnecting(
        by leave: (inout Machine) -> Machine.Drop, sourceLocation: SourceLocation = #_sourceLocation
    ) -> (machine: Machine, drop: Machine.Drop) {
        let c = Connection()
        var m = self.connected(c)
        let drop = leave(&m)
        #expect(drop.connection === c && drop.wasConnected, sourceLocation: sourceLocation)
        return (m, drop)
    }

    @Test("idle → opening → signingIn → connected; only the current connection advances")
    func connecting() {
        var m = Machine()
        #expect(m.connection == nil && !m.isConnected && !m.staysOffline)
        let first = m.connect()
        #expect(first.open && first.cancel == nil)
        let c = Connection()
        m.opened(c)
        #expect(m.connection === c && !m.isConnected && m.isCurrent(c))
        let again = m.connect()
        #expect(!again.open, "one connection at a time")
        let stranger = Connection()
        let strangerHello = m.helloReceived(on: stranger)
        #expect(!strangerHello && !m.isCurrent(stranger))
        let tooEarly = m.signedIn(on: c)
        #expect(!tooEarly, "no credential before the hello")
        let hello = m.helloReceived(on: c)
        #expect(hello && !m.isConnected, "nothing is sent while signing in")
        let twice = m.helloReceived(on: c)
        #expect(!twice)
        let signed = m.signedIn(on: c)
        #expect(signed && m.isConnected && m.connection === c)
        let late = m.signedIn(on: c)
        #expect(!late)
    }

    @Test("a drop from each connection state goes idle, says whether it had signed in; a retry waits, fires, connects")
    func dropsAndRetries() {
        let dropped = self.leftAfterConnecting { $0.drop() }
        var m = dropped.machine
        #expect(dropped.drop.timer == nil && m.connection == nil)
        // Opening and signing in: dropped without having been connected.
        for stage in 0..<2 {
            var n = Machine()
            _ = n.connect()
            let d = Connection()
            n.opened(d)
            if stage == 1 { _ = n.helloReceived(on: d) }
            let dropped = n.drop()
            #expect(dropped.connection === d && !dropped.wasConnected)
            let signedAfterDrop = n.signedIn(on: d)
            #expect(!signedAfterDrop, "a credential that arrives after the drop is ignored")
        }
        let nothing = m.drop()
        #expect(nothing.connection == nil && !nothing.wasConnected)
        let timer = Timer()
        let scheduled = m.scheduleRetry { timer }
        #expect(scheduled)
        let second = m.scheduleRetry { Timer() }
        #expect(!second, "one retry planned at a time")
        // connect() while a retry waits: connects now and cancels the timer.
        var early = m
        let now = early.connect()
        #expect(now.open && now.cancel === timer)
        let fired = m.retryFired()
        #expect(fired)
        let firedAgain = m.retryFired()
        #expect(!firedAgain)
        #expect(m.connect().open)
        // No retry while connected.
        var busy = self.connected(Connection())
        let busyRetry = busy.scheduleRetry { Timer() }
        #expect(!busyRetry)
    }

    @Test("offline (goOffline or the server's shutdown) from each state; goOnline returns to idle")
    func offlineAndOnline() {
        var (m, _) = self.leftAfterConnecting { $0.goOffline() }
        #expect(m.staysOffline)
        #expect(!m.connect().open, "no connecting while offline")
        let retry = m.scheduleRetry { Timer() }
        #expect(!retry, "no retry while offline")
        let online = m.goOnline()
        #expect(online && !m.staysOffline)
        let onlineAgain = m.goOnline()
        #expect(!onlineAgain, "goOnline only leaves offline")
        // Offline while a retry waits: its timer is handed back to cancel.
        var waiting = Machine()
        let timer = Timer()
        _ = waiting.scheduleRetry { timer }
        let left = waiting.goOffline()
        #expect(left.timer === timer && left.connection == nil && waiting.staysOffline)
        let fired = waiting.retryFired()
        #expect(!fired, "a cancelled retry that fires anyway does nothing")
    }

    @Test("close is final from every state")
    func close() {
        var (m, _) = self.leftAfterConnecting { $0.close() }
        #expect(m.staysOffline)
        let online = m.goOnline()
        #expect(!online && !m.connect().open)
        let offline = m.goOffline()
        #expect(offline.connection == nil && m.staysOffline)
        let again = m.close()
        #expect(again.connection == nil && again.timer == nil)
        var idle = Machine()
        _ = idle.close()
        #expect(!idle.connect().open)
        var offlineFirst = Machine()
        _ = offlineFirst.goOffline()
        _ = offlineFirst.close()
        let reopened = offlineFirst.goOnline()
        #expect(!reopened, "closed, not merely offline")
    }
}
