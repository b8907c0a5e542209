package import CanopyCore

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

/// Reading files and directories (not part of the fault-injection seam: damaged files are made by
/// writing bytes into them).
package enum FileReader {
    /// The whole file at `path`, or `nil` if it does not exist.
    package static func read(_ path: String) throws(DatabaseError) -> [UInt8]? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw StorageFiles.ioError("open", path, errno)
        }
        defer { _ = Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw StorageFiles.ioError("stat", path, errno) }
        let size = Int(info.st_size)
        var bytes = [UInt8](repeating: 0, count: size)
        var offset = 0
        let failure: Int32? = bytes.withUnsafeMutableBytes { buffer in
            while offset < size {
                let n = Glibc.read(fd, buffer.baseAddress! + offset, size - offset)
                if n < 0 && errno == EINTR { continue }
                if n < 0 { return errno }
                if n == 0 { break }
                offset += n
            }
            return nil
        }
        if let failure { throw StorageFiles.ioError("read", path, failure) }
        if offset < size { bytes.removeLast(size - offset) }
        return bytes
    }

    /// The names in `directory`.
    package static func list(_ directory: String) throws(DatabaseError) -> [String] {
        guard let dir = opendir(directory) else { throw StorageFiles.ioError("list", directory, errno) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// `path` made absolute against the current directory (no symlinks resolved).
    package static func absolutePath(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let cwd = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return (cwd == "/" ? "" : cwd) + "/" + path
    }

    /// Creates `directory` and its missing parents.
    package static func createDirectory(_ directory: String) throws(DatabaseError) {
        var current = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o755) != 0 && errno != EEXIST {
                throw StorageFiles.ioError("create directory", current, errno)
            }
        }
        var info = stat()
        guard stat(directory, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw DatabaseError(.ioError, "\(directory) is not a directory.")
        }
    }
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for bodies with typed throws.
    package func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws(DatabaseError) -> Result) throws(DatabaseError) -> Result {
        let outcome: Swift.Result<Result, DatabaseError> = self.withUnsafeBytes { raw in
            do throws(DatabaseError) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try outcome.get()
    }
}
