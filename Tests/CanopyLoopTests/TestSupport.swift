import CanopyLoop
import CanopyTestSupport
import Foundation
import Synchronization
import Testing

/// A joinable POSIX thread (Foundation's `Thread` cannot be joined); joining is bounded.
final class TestThread: Sendable {
    private let thread: pthread_t
    private let finished = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () -> Void) {
        final class Body {
            let run: @Sendable () -> Void
            init(_ run: @escaping @Sendable () -> Void) { self.run = run }
        }
        var thread = pthread_t()
        let finished = self.finished
        let context = Unmanaged.passRetained(
            Body({
                body()
                finished.signal()
            })
        ).toOpaque()
        let status = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
                return nil
            }, context)
        precondition(status == 0, "pthread_create failed: \(status)")
        self.thread = thread
    }

    /// Waits for the thread to finish, at most `seconds`; throws ``WaitTimedOut`` (leaving the
    /// thread running) after that.
    func join(seconds: Double = defaultWaitSeconds) throws {
        try self.finished.wait(for: "a test thread to finish", seconds: seconds)
        pthread_join(self.thread, nil)
    }
}

/// Starts `count` threads running `body(index)`; join them with `joinAll()`.
func spawnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) -> [TestThread] {
    (0..<count).map { index in TestThread { body(index) } }
}

extension [TestThread] {
    func joinAll() throws {
        for thread in self { try thread.join() }
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

/// Runs `body` on `loop`, started first on a thread named `thread` if one is given, then expects
/// the loop to shut down cleanly.
func withLoop(
    _ loop: EventLoop, thread: String? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (EventLoop) throws -> Void
) throws {
    if let thread { try loop.startThread(name: thread) }
    try body(loop)
    #expect(loop.shutdown()?.isClean == true, sourceLocation: sourceLocation)
}
