import CLibUV
import CanopyCore

/// A task executor on threads of its own, which live as long as the process.
///
/// Swift concurrency's default executor has as many threads as the machine has cores, and code
/// anywhere in the process may hold them with blocking work. A task that prefers this executor
/// (`Task(executorPreference:)`, `withTaskExecutorPreference`), and every child task it creates,
/// runs here instead and keeps running while those threads are busy. Remote databases' connections
/// run on ``connections``; the tests run their in-process servers on a pool of their own.
package final class ThreadPoolTaskExecutor: TaskExecutor, Sendable {
    private struct Queue {
        var jobs: [UnownedJob] = []
        var next = 0
        var isEmpty: Bool { self.next == self.jobs.count }
    }

    /// The executor that remote databases' connections (WebSocket I/O and decoding) run on.
    package static let connections = ThreadPoolTaskExecutor(threads: 2, name: "canopy-conn")

    private let queue = ConditionLock(Queue())

    /// Starts `threads` threads named `name` (at most 15 bytes are kept).
    package init(threads: Int, name: String) {
        for _ in 0..<threads {
            let status = startNamedThread(name) { self.work() }.status
            precondition(status == 0, "uv_thread_create failed: \(UVError(code: status))")
        }
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        self.queue.withLock { $0.jobs.append(job) }
        self.queue.broadcast()
    }

    private func work() -> Never {
        while true {
            let job = self.queue.withLock(waitingWhile: { $0.isEmpty }) { queue in
                let job = queue.jobs[queue.next]
                queue.next += 1
                if queue.isEmpty {
                    queue.jobs.removeAll(keepingCapacity: true)
                    queue.next = 0
                }
                return job
            }
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
