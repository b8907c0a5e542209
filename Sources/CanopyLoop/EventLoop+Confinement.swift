import CanopyCore

extension EventLoop {
    /// Whether loop-confined state may be touched from the calling thread: it is the loop thread,
    /// or the loop has finished closing, so no thread runs it any more (closing code then cleans
    /// up on whichever thread closed the database). Any thread may ask.
    ///
    /// In drain mode the thread that drained the loop first is its loop thread.
    package var isLoopConfinementSatisfied: Bool {
        self.inLoop || self.control.withLock { $0.report != nil }
    }

    /// Debug builds: stops the program unless ``isLoopConfinementSatisfied``, naming the caller.
    /// Compiled out in release builds, like swift-nio's `assertInEventLoop`; call it first thing in
    /// every loop-thread-only entry point. Any thread may call it.
    package func assertOnLoop(
        _ message: @autoclosure () -> String = "must be called on the event loop thread",
        file: StaticString = #fileID,
        line: UInt = #line
    ) {
        assert(self.isLoopConfinementSatisfied, message(), file: file, line: line)
    }
}
