import CLibUV

/// A timer on an ``EventLoop`` (a `uv_timer_t`), returned by
/// ``EventLoop/schedule(after:repeating:_:)`` and ``EventLoop/scheduleFromAnyThread(after:repeating:_:)``.
///
/// Its callback runs on the loop thread. A one-shot timer closes its handle after firing; a
/// repeating one keeps firing until ``cancel()`` or shutdown. While the handle is open it keeps
/// the timer, and so the callback and what it captures, alive: a repeating timer owned by the
/// object its callback uses should capture that object `[weak]`. The timer holds its loop weakly.
// @unchecked Sendable: `state` and `callback` are only touched on the loop thread; cancel() from
// another thread hops there through execute(_:).
package final class LoopTimer: @unchecked Sendable {
    private enum State {
        /// Created; the loop thread has not started the uv timer yet.
        case unarmed
        case armed(UnsafeMutablePointer<uv_timer_t>)
        /// `uv_close` was called; the close callback has not run yet.
        case closing
        /// Closed, cancelled before it was armed, or discarded by a closing loop.
        case finished
    }

    private weak var loop: EventLoop?
    let timeoutMilliseconds: UInt64
    /// 0 for a one-shot timer.
    let repeatMilliseconds: UInt64
    private var callback: (() -> Void)?
    private var state = State.unarmed

    init(loop: EventLoop, delay: Duration, interval: Duration?, callback: @escaping () -> Void) {
        self.loop = loop
        self.timeoutMilliseconds = delay.roundedUpMilliseconds
        self.repeatMilliseconds = interval.map { max(1, $0.roundedUpMilliseconds) } ?? 0
        self.callback = callback
    }

    /// Stops the timer and releases its callback. Idempotent.
    ///
    /// Any thread may call it. On the loop thread it takes effect at once: the callback will not
    /// run again. From another thread it is posted with ``EventLoop/execute(_:)`` (and may block
    /// like any producer), so a callback already due may still run once before it takes effect.
    package func cancel() {
        guard let loop = self.loop else { return }  // the loop is gone, and closed its handles
        if loop.inLoop {
            self.cancelOnLoop()
        } else {
            loop.execute { self.cancelOnLoop() }  // refused only when shutdown closes it anyway
        }
    }

    /// Whether the timer may still fire: not cancelled, not closed, and (one-shot) not fired yet.
    /// Loop thread only.
    package var isActive: Bool {
        self.loop?.preconditionInLoop()
        switch self.state {
        case .unarmed, .armed: return true
        case .closing, .finished: return false
        }
    }

    /// On the loop thread: start the uv timer, unless cancelled meanwhile or the loop is closing.
    func arm(on loop: EventLoop) {
        guard case .unarmed = self.state, !loop.closingStarted else {
            self.discard()
            return
        }
        let handle = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
        uv_timer_init(loop.loop, handle)  // cannot fail: it only fills in the struct
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()  // released on close
        self.state = .armed(handle)
        uv_update_time(loop.loop)  // measure the delay from now, not from the loop's cached time
        uv_timer_start(
            handle,
            { handle in
                guard let handle, let data = handle.pointee.data else { return }
                let loop = EventLoop.from(handle.pointee.loop)
                loop.callbacksRun += 1
                Unmanaged<LoopTimer>.fromOpaque(data).takeUnretainedValue().fire()
            }, self.timeoutMilliseconds, self.repeatMilliseconds)
    }

    /// Marks a timer that will never be armed as finished and drops its callback.
    func discard() {
        if case .unarmed = self.state {
            self.state = .finished
        }
        self.callback = nil
    }

    private func fire() {
        guard case .armed = self.state else { return }
        let callback = self.callback  // keeps the closure alive if it cancels its own timer
        callback?()
        if self.repeatMilliseconds == 0 {
            self.cancelOnLoop()
        }
    }

    private func cancelOnLoop() {
        switch self.state {
        case .unarmed:
            self.discard()
        case .armed(let handle):
            if uv_is_closing(cuv_handle(handle)) == 0 {  // shutdown may have closed it already
                uv_timer_stop(handle)
                uv_close(cuv_handle(handle), releaseClosedHandle)
            }
            self.state = .closing
            self.callback = nil
        case .closing, .finished:
            break
        }
    }
}

extension LoopTimer: LoopHandleOwner {
    func handleDidClose() {
        self.state = .finished
        self.callback = nil
    }
}
