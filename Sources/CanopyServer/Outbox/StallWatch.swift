import NIOCore
import Synchronization

/// Cuts off a client that stops reading: one that takes nothing of what was written to it for a
/// whole ``ServerConfiguration/slowClientTimeout`` (see ``StallClock``). Shared by event streams
/// and SDK (WebSocket) connections; the ticks run on the connection's event loop, only while
/// something waits for the client.
final class StallWatch: Sendable {
    private let clock = Mutex(StallClock())
    private let timeout: TimeAmount
    private let eventLoop: any EventLoop
    private let cutOff: @Sendable () -> Void

    /// - Parameter cutOff: Called once, on `eventLoop`, when the client made no progress for a
    ///   whole `timeout`.
    init(timeout: TimeAmount, eventLoop: any EventLoop, cutOff: @escaping @Sendable () -> Void) {
        self.timeout = timeout
        self.eventLoop = eventLoop
        self.cutOff = cutOff
    }

    /// Something was written for the client (any thread).
    func queued() {
        self.perform(self.clock.withLock { $0.queued() })
    }

    /// The client took a write; `drained`: nothing more waits for it (any thread).
    func progressed(drained: Bool) {
        self.perform(self.clock.withLock { $0.progressed(drained: drained) })
    }

    /// The connection ended: the watch does nothing more.
    func stop() {
        self.clock.withLock { $0.stop() }
    }

    private func perform(_ action: StallClock.Action) {
        switch action {
        case .none: break
        case .arm:
            self.eventLoop.scheduleTask(in: self.timeout) { self.perform(self.clock.withLock { $0.tick() }) }
        case .cutOff:
            self.cutOff()
        }
    }
}
