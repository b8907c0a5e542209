import CLibUV

/// Starts a thread named `name` that runs `body`.
///
/// - Returns: libuv's status (0 when the thread started; `body` is then released when it returns)
///   and the thread.
func startNamedThread(_ name: String, _ body: @escaping () -> Void) -> (status: Int32, thread: uv_thread_t) {
    // The thread owns this reference until `body` returns.
    let start = Unmanaged.passRetained(ThreadStart(name: name, body: body)).toOpaque()
    var thread = uv_thread_t()
    let status = uv_thread_create(
        &thread,
        { context in
            guard let context else { return }
            let start = Unmanaged<ThreadStart>.fromOpaque(context).takeRetainedValue()
            setCurrentThreadName(start.name)
            start.body()
        }, start)
    if status != 0 { Unmanaged<ThreadStart>.fromOpaque(start).release() }
    return (status, thread)
}

/// What a new thread needs, passed through `uv_thread_create`'s `void *`.
private final class ThreadStart {
    let name: String
    let body: () -> Void

    init(name: String, body: @escaping () -> Void) {
        self.name = name
        self.body = body
    }
}

/// Names the calling thread (Linux keeps 15 bytes).
private func setCurrentThreadName(_ name: String) {
    var name = name
    while name.utf8.count > 15 {
        name.removeLast()
    }
    cuv_set_current_thread_name(name)
}
