import CLibUV

extension EventLoop {
    /// Shuts the loop down when the process receives `signal` (e.g. `SIGINT` for Ctrl-C).
    ///
    /// Loop thread only (checked); ``run(stopOn:)`` calls it for you. The `uv_signal_t` is
    /// unreferenced, so it never keeps the loop alive on its own. Its callback runs on the loop
    /// thread and starts closing right away rather than queueing behind pending jobs; the jobs
    /// already accepted still run first. Does nothing once shutdown has begun.
    ///
    /// - Throws: ``UVError`` if libuv cannot install the handler (e.g. an invalid signal number).
    package func stopOnSignal(_ signal: Int32) throws {
        self.preconditionInLoop()
        guard !self.closingStarted else { return }
        let handle = UnsafeMutablePointer<uv_signal_t>.allocate(capacity: 1)
        let status = uv_signal_init(self.loop, handle)
        guard status == 0 else {
            handle.deallocate()
            throw UVError(code: status)
        }
        handle.pointee.data = nil  // nothing to keep alive: the callback finds the loop via loop->data
        let started = uv_signal_start(
            handle,
            { handle, _ in
                guard let handle else { return }
                let loop = EventLoop.from(handle.pointee.loop)
                loop.callbacksRun += 1
                loop.shutdownFromSignal()
            }, signal)
        guard started == 0 else {
            uv_close(cuv_handle(handle), releaseClosedHandle)
            throw UVError(code: started)
        }
        uv_unref(cuv_handle(handle))
    }
}
