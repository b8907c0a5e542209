import Canopy
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh directory for one scenario's durable database, under `CANOPY_BENCH_DIR` (default: the
/// system temporary directory); removed by ``remove()``.
final class BenchDirectory: Sendable {
    let path: String

    init(_ label: String) throws {
        let base = ProcessInfo.processInfo.environment["CANOPY_BENCH_DIR"] ?? NSTemporaryDirectory()
        var template = Array(((base.hasSuffix("/") ? base : base + "/") + "canopy-bench-\(label)-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw BenchError("mkdtemp under \(base) failed: errno \(errno)")
        }
        self.path = String(cString: made)
    }

    /// An existing directory (holding a database in `db`).
    init(existing path: String) {
        self.path = path
    }

    /// The directory for the database itself (created by the database when it opens).
    var databasePath: String { self.path + "/db" }

    func remove() {
        try? FileManager.default.removeItem(atPath: self.path)
    }

    /// The regular files of the database directory and their sizes, by name.
    func databaseFiles() -> [(name: String, bytes: Int)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: self.databasePath)) ?? []
        return names.sorted().compactMap { name in
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: self.databasePath + "/" + name),
                attributes[.type] as? FileAttributeType == .typeRegular, let size = attributes[.size] as? Int
            else { return nil }
            return (name, size)
        }
    }

    /// Total bytes of the database files whose name starts with `prefix` (all files for "").
    func databaseBytes(prefix: String = "") -> Int {
        self.databaseFiles().filter { $0.name.hasPrefix(prefix) }.reduce(0) { $0 + $1.bytes }
    }

    /// Writes everything back (`sync`), then drops every database file from the page cache, so
    /// the next open reads the disk. Returns whether every file was evicted.
    func evictFromPageCache() -> Bool {
        sync()
        var all = true
        for file in self.databaseFiles() {
            let fd = open(self.databasePath + "/" + file.name, O_RDONLY)
            guard fd >= 0 else {
                all = false
                continue
            }
            fsync(fd)
            if posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0 { all = false }
            close(fd)
        }
        return all
    }

    /// Reads every database file once, so the next open finds them in the page cache.
    func warmPageCache() {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        for file in self.databaseFiles() {
            let fd = open(self.databasePath + "/" + file.name, O_RDONLY)
            guard fd >= 0 else { continue }
            while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
            close(fd)
        }
    }
}

/// Opens the durable database at `path` with `policy` (and a checkpoint threshold, if given).
func openDurable(_ path: String, _ policy: SyncPolicy, checkpointThreshold: Int? = nil) throws -> Database {
    var configuration = Database.Configuration()
    configuration.syncPolicy = policy
    if let checkpointThreshold { configuration.checkpointThreshold = checkpointThreshold }
    return try Database(path: path, configuration)
}

/// Runs `body` on the concurrency pool and blocks this thread until it finishes.
func blockingAwait<T>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = AsyncOutcome<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            outcome.result = .success(try await body())
        } catch {
            outcome.result = .failure(error)
        }
        done.signal()
    }
    done.wait()
    return try outcome.result!.get()
}

/// The result of ``blockingAwait(_:)``'s task.
private final class AsyncOutcome<T>: @unchecked Sendable {  // written before the signal, read after the wait
    var result: Result<T, any Error>?
}

/// The storage status of a durable database (blocking).
func blockingStorageStatus(_ db: Database) throws -> StorageStatus {
    guard let status = try blockingAwait({ try await db.storageStatus() }) else {
        throw BenchError("no storage status (in-memory database?)")
    }
    return status
}

/// Writes a checkpoint now and waits until it is on disk.
func blockingCheckpoint(_ db: Database) throws {
    try blockingAwait { try await db.checkpoint() }
}

/// Counts write completions and wakes a waiter once `expected` of them arrived; the first error
/// is kept.
final class CompletionCounter: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private let done = DispatchSemaphore(value: 0)
    private var count = 0
    private var expected = Int.max
    private(set) var firstError: (any Error)?

    /// One completion (any thread).
    func complete(_ error: (any Error)?) {
        self.lock.lock()
        self.count += 1
        if let error, self.firstError == nil { self.firstError = error }
        let wake = self.count == self.expected
        self.lock.unlock()
        if wake { self.done.signal() }
    }

    /// Blocks until `expected` completions in all arrived.
    func wait(for expected: Int) {
        self.lock.lock()
        self.expected = expected
        let already = self.count >= expected
        self.lock.unlock()
        if !already { self.done.wait() }
    }

    var completed: Int {
        self.lock.lock()
        defer { self.lock.unlock() }
        return self.count
    }
}
