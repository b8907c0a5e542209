#if canImport(Glibc)
    import Glibc
#endif

/// The system calls durable storage makes to change files: the seam where tests inject short
/// writes, `ENOSPC`, `fsync` errors and crashes.
///
/// Each call returns what the system call returns, with failures as `-errno`.
package protocol FileIO: Sendable {
    func open(_ path: String, flags: Int32, mode: UInt32) -> Int32
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int
    func fsync(_ fd: Int32) -> Int32
    func ftruncate(_ fd: Int32, _ size: Int) -> Int32
    func rename(_ from: String, _ to: String) -> Int32
    func unlink(_ path: String) -> Int32
    func close(_ fd: Int32)
}

/// The real system calls.
package struct POSIXFileIO: FileIO {
    package init() {}

    package func open(_ path: String, flags: Int32, mode: UInt32) -> Int32 {
        let fd = Glibc.open(path, flags | O_CLOEXEC, mode_t(mode))
        return fd >= 0 ? fd : -errno
    }

    package func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        let n = Glibc.write(fd, bytes.baseAddress, bytes.count)
        return n >= 0 ? n : -Int(errno)
    }

    package func fsync(_ fd: Int32) -> Int32 {
        Glibc.fsync(fd) == 0 ? 0 : -errno
    }

    package func ftruncate(_ fd: Int32, _ size: Int) -> Int32 {
        Glibc.ftruncate(fd, off_t(size)) == 0 ? 0 : -errno
    }

    package func rename(_ from: String, _ to: String) -> Int32 {
        Glibc.rename(from, to) == 0 ? 0 : -errno
    }

    package func unlink(_ path: String) -> Int32 {
        Glibc.unlink(path) == 0 ? 0 : -errno
    }

    package func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }
}
