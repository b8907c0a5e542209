import CLibUV

extension EventLoop {
    /// Runs `work` on libuv's thread pool, then `completion` with its result on the loop thread.
    ///
    /// Loop thread only (checked). Use it for blocking calls such as `write`/`fsync` that must not
    /// stall the loop. The request keeps this loop, `work` and `completion` alive until the
    /// completion has run; shutdown waits for it, and ``drain(maxTurns:)`` blocks for it. The pool
    /// has 4 threads and does not keep order between requests: chain them for ordered I/O.
    /// `work` must not call ``shutdown()`` (the loop would wait for it).
    ///
    /// - Parameters:
    ///   - work: Runs on a thread-pool thread.
    ///   - completion: Runs on the loop thread with `work`'s result.
    package func runInThreadPool<Value: Sendable>(
        _ work: @escaping @Sendable () -> Value,
        then completion: @escaping (Value) -> Void
    ) {
        self.preconditionInLoop()
        let slot = ResultSlot<Value>()
        let request = ThreadPoolRequest(
            loop: self,
            work: { slot.value = work() },
            completion: {
                if let value = slot.value { completion(value) }
            }
        )
        let req = UnsafeMutablePointer<uv_work_t>.allocate(capacity: 1)
        req.pointee.data = Unmanaged.passRetained(request).toOpaque()  // released on completion
        let status = uv_queue_work(
            self.loop, req,
            { req in
                guard let data = req?.pointee.data else { return }
                Unmanaged<ThreadPoolRequest>.fromOpaque(data).takeUnretainedValue().runWork()
            },
            { req, status in
                guard let req, let data = req.pointee.data else { return }
                let request = Unmanaged<ThreadPoolRequest>.fromOpaque(data).takeRetainedValue()
                req.deallocate()
                request.complete(status: status)
            })
        precondition(status == 0, "uv_queue_work failed: \(UVError(code: status))")
        self.requestsInFlight += 1
    }
}

/// Where the pool thread leaves the result for the loop thread; libuv orders the two accesses.
private final class ResultSlot<Value> {
    var value: Value?
}

/// A `uv_work_t`'s Swift side, retained by `req->data` from queueing until completion.
private final class ThreadPoolRequest {
    /// Strong on purpose: a request in flight keeps its owner alive. An `unowned` capture crashes
    /// when the owner is released before the completion runs; the owner never holds the request,
    /// so this is no cycle (see *Threading and the event loop*, "Inside the loop").
    let loop: EventLoop
    private var work: (() -> Void)?
    private var completion: (() -> Void)?

    init(loop: EventLoop, work: @escaping () -> Void, completion: @escaping () -> Void) {
        self.loop = loop
        self.work = work
        self.completion = completion
    }

    /// On a pool thread.
    func runWork() {
        self.work?()
        self.work = nil
    }

    /// On the loop thread. `status` is `UV_ECANCELED` only if the request was cancelled, which
    /// this module never does; the completion is skipped then.
    func complete(status: Int32) {
        self.loop.requestsInFlight -= 1
        self.loop.callbacksRun += 1
        if status == 0 {
            self.completion?()
        }
        self.completion = nil
    }
}
