/// What happened when an ``EventLoop`` finished shutting down.
///
/// Produced once, on the loop thread, after the last close callback ran; any thread may read it
/// through ``EventLoop/closeReport``.
package struct LoopCloseReport: Sendable, Equatable {
    /// The result of `uv_loop_close`: `0`, or a negative error such as `-16` (`EBUSY`) when a
    /// handle or request was still open.
    package var loopCloseResult: Int32
    /// Handles still known to the loop (counted with `uv_walk`) just before `uv_loop_close`.
    package var handlesLeft: Int
    /// Whether `uv_loop_alive` reported active handles or requests just before `uv_loop_close`.
    package var loopWasAlive: Bool
    /// Jobs that were queued when shutdown began and ran as part of it.
    package var jobsRunDuringShutdown: Int

    /// `true` when the loop closed cleanly: no handle left and `uv_loop_close` returned 0.
    package var isClean: Bool {
        self.loopCloseResult == 0 && self.handlesLeft == 0 && !self.loopWasAlive
    }
}
