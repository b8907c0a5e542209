import CanopyLoop
import Foundation
import Synchronization
import Testing

/// A joinable POSIX thread (Foundation's `Thread` cannot be joined).
final class TestThread: Sendable {
    private let thread: pthread_t

    init(_ body: @escaping @Sendable () -> Void) {
        final class Body {
            let run: @Sendable () -> Void
            init(_ run: @escaping @Sendable () -> Void) { self.run = run }
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        let status = pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
            return nil
        }, context)
        precondition(status == 0, "pthread_create failed: \(status)")
        self.thread = thread
    }

    func join() {
        pthread_join(self.thread, nil)
    }
}

/// Starts `count` threads running `body(index)`; join them with `joinAll()`.
func spawnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) -> [TestThread] {
    (0..<count).map { index in TestThread { body(index) } }
}

extension [TestThread] {
    func joinAll() {
        for thread in self { thread.join() }
    }
}

/// A value shared between the test thread and others, behind a `Mutex`.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        self.mutex = Mutex(value)
    }

    var value: Value {
        self.mutex.withLock { $0 }
    }

    @discardableResult
    func mutate<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
        self.mutex.withLock { body(&$0) }
    }
}

/// Polls `condition` (yielding the CPU) until it holds. Used only to observe a state another
/// thread must reach, such as a producer blocking; never to let time pass.
func waitUntil(_ condition: () -> Bool) {
    while !condition() {
        sched_yield()
    }
}

/// The names (`comm`) of this process's live threads, from /proc/self/task.
func liveThreadNames() -> [String] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.compactMap { task in
        let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
        return comm?.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// The calling thread's id, comparable across threads.
func currentThreadID() -> UInt {
    UInt(bitPattern: Int(bitPattern: pthread_self()))
}

/// An object whose release tests observe through a `weak` reference.
final class Tracker: Sendable {}

/// Which way a test drives its loop.
enum DriveMode: String, CustomTestStringConvertible, Sendable {
    case drain, thread
    var testDescription: String { self.rawValue }
}
