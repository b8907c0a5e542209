public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child process started with `posix_spawn`, with the part of Foundation's `Process` API the
/// tests use.
///
/// Foundation's `Process.run()` on Linux (Swift 6.3.1) now and then crashes the test process: to
/// close the child's other descriptors it reads `/proc/self/fd`, copying each entry's whole
/// 256-byte name, past the end of glibc's buffer when the next page is unmapped
/// (swift-corelibs-foundation pull request 5472). This closes them with glibc's
/// `posix_spawn_file_actions_addclosefrom_np` instead.
public final class ChildProcess: @unchecked Sendable {
    // @unchecked Sendable: the configuration is set before `run()` on one thread; after it, only
    // `state` changes, behind its lock.
    public var executableURL: URL?
    public var arguments: [String] = []
    /// The child's environment; `nil` passes this process's.
    public var environment: [String: String]?
    public var currentDirectoryURL: URL?
    /// A `Pipe`, a `FileHandle` (`FileHandle.nullDevice` included), or `nil` to share this
    /// process's.
    public var standardInput: Any?
    public var standardOutput: Any?
    public var standardError: Any?
    /// Called once the child exited, on the thread that waited for it.
    public var terminationHandler: (@Sendable (ChildProcess) -> Void)?

    private let state = Locked<(pid: pid_t, status: Int32?)>((0, nil))
    private let exited = DispatchGroup()

    public init() {}

    public var processIdentifier: Int32 { self.state.value.pid }
    public var isRunning: Bool {
        let exit = self.state.value
        return exit.pid != 0 && exit.status == nil
    }
    /// The exit code, or the number of the signal that ended the child (as `Process` gives it).
    public var terminationStatus: Int32 {
        guard let status = self.state.value.status else { return 0 }
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : status & 0x7F
    }

    public func waitUntilExit() { self.exited.wait() }

    public func terminate() {
        if self.isRunning { kill(self.processIdentifier, SIGTERM) }
    }

    public func run() throws {
        guard let path = self.executableURL?.path else { throw Self.failure("no executable", EINVAL) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let stdio: [(target: Int32, io: Any?)] = [(0, self.standardInput), (1, self.standardOutput), (2, self.standardError)]
        for (target, io) in stdio {
            if let pipe = io as? Pipe {
                let handle = target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
            } else if let handle = io as? FileHandle {
                if handle.fileDescriptor < 0 {
                    posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_RDWR, 0)
                } else {
                    posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
                }
            }
        }
        let closing = Self.addCloseFrom(&actions, 3)
        guard closing == 0 else { throw Self.failure("posix_spawn_file_actions_addclosefrom_np", closing) }
        if let directory = self.currentDirectoryURL?.path {
            let changing = Self.addChdir(&actions, directory)
            guard changing == 0 else { throw Self.failure("posix_spawn_file_actions_addchdir_np", changing) }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group, as `Process` does: a signal to the tests' group does not reach it.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        let argv = ([path] + self.arguments).map { strdup($0) } + [nil]
        let environment = self.environment ?? ProcessInfo.processInfo.environment
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard status == 0 else { throw Self.failure("posix_spawn \(path)", status) }
        self.state.withLock { $0.pid = pid }
        self.exited.enter()
        // This process's copies of the child's ends: without closing them, a read of the child's
        // output would never see its end.
        for (target, io) in stdio {
            guard let pipe = io as? Pipe else { continue }
            try? (target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting).close()
        }
        let child = pid
        Thread { [self] in
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
            self.state.withLock { $0.status = status }
            self.exited.leave()
            self.terminationHandler?(self)
        }.start()
    }

    private static func failure(_ what: String, _ code: Int32) -> NSError {
        NSError(
            domain: NSPOSIXErrorDomain, code: Int(code),
            userInfo: [NSLocalizedDescriptionKey: "\(what): \(String(cString: strerror(code)))"])
    }

    // glibc has these (2.34 and 2.29), but Swift's Glibc module does not declare them.
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias ChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private static let addCloseFrom = unsafeBitCast(dlsym(nil, "posix_spawn_file_actions_addclosefrom_np")!, to: CloseFrom.self)
    private static let addChdir = unsafeBitCast(dlsym(nil, "posix_spawn_file_actions_addchdir_np")!, to: ChangeDirectory.self)
}
