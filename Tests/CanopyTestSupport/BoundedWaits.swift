public import Dispatch
import Foundation

/// A wait in a test that gave up: what it waited for did not happen in time. Thrown so a
/// regression fails the test instead of hanging the run.
public struct WaitTimedOut: Error, CustomStringConvertible {
    public let description: String
    public init(_ what: String, seconds: Double) { self.description = "timed out after \(seconds) s waiting for \(what)" }
}

/// How long a bounded wait waits by default: far longer than any healthy wait, far shorter than
/// a CI job's limit.
public let defaultWaitSeconds: Double = 60

extension DispatchSemaphore {
    /// Waits for a signal, at most `seconds`; throws ``WaitTimedOut`` naming `what` after that.
    public func wait(for what: String, seconds: Double = defaultWaitSeconds) throws {
        if self.wait(timeout: .now() + seconds) == .timedOut { throw WaitTimedOut(what, seconds: seconds) }
    }
}

extension DispatchSemaphore {
    /// For synchronous code that cannot throw (fuzz entry points): waits for a signal, at most
    /// `seconds`, then stops the process naming `what`, so a hang becomes a reported crash.
    public func waitOrStop(_ what: String, seconds: Double = defaultWaitSeconds) {
        if self.wait(timeout: .now() + seconds) == .timedOut {
            fatalError("timed out after \(seconds) s waiting for \(what)")
        }
    }
}

extension DispatchGroup {
    /// Waits until the group is empty, at most `seconds`; throws ``WaitTimedOut`` after that.
    public func wait(for what: String, seconds: Double = defaultWaitSeconds) throws {
        if self.wait(timeout: .now() + seconds) == .timedOut { throw WaitTimedOut(what, seconds: seconds) }
    }
}

/// Polls `condition` (yielding the CPU) until it holds, at most `seconds`; throws
/// ``WaitTimedOut`` naming `what` after that. For a state another thread must reach, such as a
/// producer blocking; never to let time pass.
public func waitUntil(_ what: String, seconds: Double = defaultWaitSeconds, _ condition: () -> Bool) throws {
    let deadline = DispatchTime.now() + seconds
    while !condition() {
        if DispatchTime.now() >= deadline { throw WaitTimedOut(what, seconds: seconds) }
        sched_yield()
    }
}

/// Kills a child process that outlives its time (SIGKILL), so reading its output and
/// `waitUntilExit()` always return; ``check()`` then reports the timeout.
public final class ProcessWatchdog: Sendable {
    private let fired = Locked(false)
    private let done = Locked(false)
    private let what: String
    private let seconds: Double

    /// Starts watching `process`, which must be running (or about to be run).
    public init(_ process: ChildProcess, _ what: String, seconds: Double = defaultWaitSeconds) {
        self.what = what
        self.seconds = seconds
        let fired = self.fired
        let done = self.done
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            guard !done.value, process.isRunning else { return }
            fired.withLock { $0 = true }
            kill(process.processIdentifier, SIGKILL)
        }
    }

    /// Stops watching; throws ``WaitTimedOut`` if the process had to be killed.
    public func check() throws {
        self.done.withLock { $0 = true }
        if self.fired.value { throw WaitTimedOut(self.what, seconds: self.seconds) }
    }
}
