import CanopyStorage
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A ``FileIO`` that passes calls to the real system calls but fails the ones a test arms:
/// short writes, write errors (`ENOSPC`), `fsync`, `ftruncate` and `rename` errors, each only on
/// files whose name contains `target` (e.g. "journal-" or "checkpoint-").
final class FaultyFileIO: FileIO {
    struct Plan {
        var target = "journal-"
        /// The next this many writes write only half their bytes (at least one).
        var shortWrites = 0
        /// The next this many writes fail with `writeErrno`.
        var failingWrites = 0
        var writeErrno = ENOSPC
        var failingSyncs = 0
        var failingTruncates = 0
        var failingRenames = 0
        /// Calls that failed or were shortened.
        var injected = 0
    }

    private let real = POSIXFileIO()
    private let state = Mutex((plan: Plan(), paths: [Int32: String]()))

    func arm(_ change: (inout Plan) -> Void) {
        self.state.withLock { change(&$0.plan) }
    }

    var injected: Int { self.state.withLock { $0.plan.injected } }

    private func targeted(_ fd: Int32, _ decide: (inout Plan) -> Bool) -> Bool {
        self.state.withLock { state in
            guard let path = state.paths[fd], path.contains(state.plan.target) else { return false }
            let hit = decide(&state.plan)
            if hit { state.plan.injected += 1 }
            return hit
        }
    }

    /// Whether the call on `fd` fails: it is on a targeted file and `counter` still counts
    /// failures to come (then one fewer).
    private func takesFailure(_ fd: Int32, _ counter: WritableKeyPath<Plan, Int>) -> Bool {
        self.targeted(fd) { plan in
            guard plan[keyPath: counter] > 0 else { return false }
            plan[keyPath: counter] -= 1
            return true
        }
    }

    func open(_ path: String, flags: Int32, mode: UInt32) -> Int32 {
        let fd = self.real.open(path, flags: flags, mode: mode)
        if fd >= 0 { self.state.withLock { $0.paths[fd] = path } }
        return fd
    }

    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        var errorCode: Int32 = 0
        if self.targeted(
            fd,
            { plan in
                guard plan.failingWrites > 0 else { return false }
                plan.failingWrites -= 1
                errorCode = plan.writeErrno
                return true
            })
        {
            return -Int(errorCode)
        }
        if bytes.count > 1 && self.takesFailure(fd, \.shortWrites) {
            return self.real.write(fd, UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count / 2)]))
        }
        return self.real.write(fd, bytes)
    }

    func fsync(_ fd: Int32) -> Int32 {
        if self.takesFailure(fd, \.failingSyncs) { return -EIO }
        return self.real.fsync(fd)
    }

    func ftruncate(_ fd: Int32, _ size: Int) -> Int32 {
        if self.takesFailure(fd, \.failingTruncates) { return -EIO }
        return self.real.ftruncate(fd, size)
    }

    func rename(_ from: String, _ to: String) -> Int32 {
        let fail = self.state.withLock { state -> Bool in
            guard from.contains(state.plan.target), state.plan.failingRenames > 0 else { return false }
            state.plan.failingRenames -= 1
            state.plan.injected += 1
            return true
        }
        return fail ? -EIO : self.real.rename(from, to)
    }

    func unlink(_ path: String) -> Int32 { self.real.unlink(path) }

    func close(_ fd: Int32) {
        self.state.withLock { _ = $0.paths.removeValue(forKey: fd) }
        self.real.close(fd)
    }
}
