package import CanopyCore

#if canImport(Glibc)
    import Glibc
#endif

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
