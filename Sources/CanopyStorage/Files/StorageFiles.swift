package import CanopyCore

#if canImport(Glibc)
    import Glibc
#endif

/// Higher-level file operations over a ``FileIO``, each failing with a `DatabaseError` that
/// names the file.
package struct StorageFiles: Sendable {
    package let io: any FileIO

    package init(io: any FileIO) {
        self.io = io
    }

    static func describe(_ errorCode: Int32) -> String {
        String(cString: strerror(errorCode))
    }

    static func ioError(_ what: String, _ path: String, _ code: Int32) -> DatabaseError {
        DatabaseError(.ioError, "Could not \(what) \(path): \(describe(code)).")
    }

    /// Opens `path` for writing (creating it), positioned at its end.
    package func openForAppend(_ path: String) throws(DatabaseError) -> Int32 {
        let fd = self.io.open(path, flags: O_WRONLY | O_CREAT | O_APPEND, mode: 0o644)
        guard fd >= 0 else { throw Self.ioError("open", path, -fd) }
        return fd
    }

    /// Writes all of `bytes`, continuing after short writes; a failure names `path`.
    package func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(DatabaseError) {
        var offset = 0
        while offset < bytes.count {
            let n = self.io.write(fd, UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            if n == -Int(EINTR) { continue }
            guard n > 0 else { throw Self.ioError("write to", path, n == 0 ? EIO : Int32(-n)) }
            offset += n
        }
    }

    package func sync(_ fd: Int32, path: String) throws(DatabaseError) {
        let status = self.io.fsync(fd)
        guard status == 0 else { throw Self.ioError("sync", path, -status) }
    }

    package func truncate(_ fd: Int32, to size: Int, path: String) throws(DatabaseError) {
        let status = self.io.ftruncate(fd, size)
        guard status == 0 else { throw Self.ioError("truncate", path, -status) }
    }

    /// Makes a directory entry change (create, rename, unlink) durable.
    package func syncDirectory(_ directory: String) throws(DatabaseError) {
        let fd = self.io.open(directory, flags: O_RDONLY | O_DIRECTORY, mode: 0)
        guard fd >= 0 else { throw Self.ioError("open directory", directory, -fd) }
        defer { self.io.close(fd) }
        try self.sync(fd, path: directory)
    }

    /// Replaces `path` with `bytes` atomically: a temporary file, `fsync`, `rename`, then an
    /// `fsync` of the directory. A crash leaves either the old file or the new one (and perhaps a
    /// `.tmp` file, which opening removes).
    package func writeAtomically(_ bytes: UnsafeRawBufferPointer, to path: String, directory: String) throws(DatabaseError) {
        let temporary = path + ".tmp"
        let fd = self.io.open(temporary, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644)
        guard fd >= 0 else { throw Self.ioError("create", temporary, -fd) }
        do {
            try self.writeAll(fd, bytes, path: temporary)
            try self.sync(fd, path: temporary)
        } catch {
            self.io.close(fd)
            _ = self.io.unlink(temporary)
            throw error
        }
        self.io.close(fd)
        let status = self.io.rename(temporary, path)
        guard status == 0 else {
            _ = self.io.unlink(temporary)
            throw Self.ioError("rename \(temporary) to", path, -status)
        }
        try self.syncDirectory(directory)
    }

    package func remove(_ path: String) throws(DatabaseError) {
        let status = self.io.unlink(path)
        guard status == 0 || status == -ENOENT else { throw Self.ioError("remove", path, -status) }
    }
}
