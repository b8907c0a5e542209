package import CanopyCore

#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive lock on a database directory (`flock` on its `LOCK` file, which holds the owner's
/// process id), held until ``release()`` or process exit. A second opener, in this process or
/// another, gets `.inUse` naming the owner; a crashed owner's lock is released by the kernel.
package final class DirectoryLock: Sendable {
    package let path: String
    private let fd: Int32

    package init(directory: String) throws(DatabaseError) {
        let path = directory + "/LOCK"
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw StorageFiles.ioError("open", path, errno) }
        if !Self.lock(fd) {
            let code = errno
            _ = Glibc.close(fd)
            guard code == EWOULDBLOCK else { throw StorageFiles.ioError("lock", path, code) }
            let owner = (try? FileReader.read(path)).flatMap { String(decoding: $0, as: UTF8.self).split(separator: "\n").first }
            let who = owner.map { "pid \($0)" } ?? "another process"
            throw DatabaseError(.inUse, "The database at \(directory) is in use by \(who) (it holds \(path)).")
        }
        let pid = "\(getpid())\n"
        _ = ftruncate(fd, 0)
        _ = pid.withCString { pwrite(fd, $0, strlen($0), 0) }
        self.path = path
        self.fd = fd
    }

    /// Takes the lock, retrying for up to about 100 ms: a process that is forking a child holds a
    /// copy of its parent's descriptors (and so of a lock just released) until the child execs.
    private static func lock(_ fd: Int32) -> Bool {
        for attempt in 0..<20 {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return true }
            guard errno == EWOULDBLOCK, attempt < 19 else { return false }
            usleep(5_000)
        }
        return false
    }

    /// Releases the lock (closing the file). Call once.
    package func release() {
        _ = ftruncate(self.fd, 0)
        _ = Glibc.close(self.fd)
    }
}
