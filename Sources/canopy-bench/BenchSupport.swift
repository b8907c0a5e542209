import Canopy
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif

// Measurement helpers shared by every scenario: the scale knob, a monotonic clock, resident-set
// sizes, deterministic data, the blocking read that marks "all writes applied", and the JSON line.

/// Where a scenario keeps its data.
enum Store: String, CaseIterable, Sendable {
    case memory
    /// A durable database (`Database(path:)`) in a fresh temporary directory, removed afterwards.
    case journal
}

enum Bench {
    /// `CANOPY_BENCH_SCALE` multiplies every N (smoke runs use 0.05).
    static let scale: Double = {
        guard let text = ProcessInfo.processInfo.environment["CANOPY_BENCH_SCALE"], let value = Double(text), value > 0 else { return 1 }
        return value
    }()

    /// `n` times the scale, at least 1.
    static func scaled(_ n: Int) -> Int { max(1, Int((Double(n) * scale).rounded())) }
}

// MARK: - Time

/// Nanoseconds on the monotonic clock (a vDSO call, cheap enough to time single API calls).
@inline(__always)
func monotonicNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// Seconds elapsed since `start` (from ``monotonicNanos()``).
func secondsSince(_ start: UInt64) -> Double { Double(monotonicNanos() &- start) / 1e9 }

/// Seconds between two ``monotonicNanos()`` readings.
func secondsBetween(_ start: UInt64, _ end: UInt64) -> Double { Double(end &- start) / 1e9 }

/// Latency summary of a set of per-call timings in nanoseconds (sorted in place).
struct LatencySummary {
    var p50: Double
    var p99: Double
    var p999: Double
    var max: Double

    init(sortingNanos samples: inout [UInt64]) {
        samples.sort()
        func at(_ q: Double) -> Double {
            guard !samples.isEmpty else { return 0 }
            let index = Swift.min(samples.count - 1, Int((Double(samples.count) * q).rounded(.up)) - 1)
            return Double(samples[Swift.max(0, index)]) / 1000
        }
        self.p50 = at(0.50)
        self.p99 = at(0.99)
        self.p999 = at(0.999)
        self.max = Double(samples.last ?? 0) / 1000
    }

    /// `p50_us`, `p99_us`, `p999_us`, `max_us`.
    var fields: [(String, JSONField)] {
        [("p50_us", .double(self.p50, 2)), ("p99_us", .double(self.p99, 2)), ("p999_us", .double(self.p999, 2)), ("max_us", .double(self.max, 1))]
    }
}

// MARK: - Memory

/// Peak resident set size of this process in MB (`getrusage` maxrss, KiB on Linux).
func peakRSSMB() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_maxrss) / 1024
}

/// Current resident set size in bytes (`/proc/self/statm`, second field, in pages).
func currentRSSBytes() -> Int {
    let fd = open("/proc/self/statm", O_RDONLY)
    guard fd >= 0 else { return -1 }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 128)
    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    guard count > 0 else { return -1 }
    let fields = buffer[0..<count].split(separator: UInt8(ascii: " "))
    guard fields.count >= 2, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return -1 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// glibc's `malloc_trim` (in <malloc.h>, which the Glibc module does not export), looked up once.
private let mallocTrim: (@convention(c) (Int) -> Int32)? = {
    guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
}()

/// Returns freed heap memory to the kernel (every malloc arena), then the current RSS in bytes.
func trimmedRSSBytes() -> Int {
    _ = mallocTrim?(0)
    return currentRSSBytes()
}

func megabytes(_ bytes: Int) -> Double { Double(bytes) / 1_048_576 }

// MARK: - Output

/// Progress and notes go to stderr; stdout carries only the JSON lines.
func log(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// A value of one JSON-line field.
enum JSONField {
    case int(Int)
    /// A number with this many decimals.
    case double(Double, Int)
    case string(String)
    case bool(Bool)

    var text: String {
        switch self {
        case .int(let i): return String(i)
        case .double(let d, let decimals): return d.isFinite ? String(format: "%.\(decimals)f", d) : "null"
        case .string(let s): return jsonQuoted(s)
        case .bool(let b): return b ? "true" : "false"
        }
    }
}

/// A JSON string literal for `s`.
func jsonQuoted(_ s: String) -> String {
    var out = "\""
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\t": out += "\\t"
        case "\r": out += "\\r"
        default:
            if scalar.value < 0x20 {
                out += String(format: "\\u%04x", scalar.value)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out + "\""
}

/// The outcome of one scenario run: the grdb-bench keys, scenario-specific extras, and the check.
struct BenchResult {
    var scenario: String
    var store: Store
    /// Operations timed.
    var n: Int
    /// Wall time until the work was done and applied.
    var seconds: Double
    var extra: [(String, JSONField)] = []
    /// `"ok"` only when the end state was verified.
    var check: String

    var passed: Bool { self.check == "ok" }

    /// One JSON object: `scenario, store, n, seconds, ops_per_s, peak_rss_mb, …extra…, check`.
    var jsonLine: String {
        let opsPerSecond = self.seconds > 0 ? Int((Double(self.n) / self.seconds).rounded()) : 0
        let fields: [(String, JSONField)] =
            [
                ("scenario", .string(self.scenario)), ("store", .string(self.store.rawValue)), ("n", .int(self.n)),
                ("seconds", .double(self.seconds, 4)), ("ops_per_s", .int(opsPerSecond)), ("peak_rss_mb", .double(peakRSSMB(), 1)),
            ] + self.extra + [("check", .string(self.check))]
        return "{" + fields.map { "\(jsonQuoted($0.0)):\($0.1.text)" }.joined(separator: ",") + "}"
    }
}

/// Writes one line to stdout, unbuffered (children share the driver's stdout).
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

// MARK: - Data

/// A small deterministic generator (SplitMix64).
struct BenchRNG {
    var state: UInt64

    init(seed: UInt64) { self.state = seed }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(self.state)
    }

    mutating func next(below upper: Int) -> Int { Int(self.next() % UInt64(upper)) }

    /// The SplitMix64 finalizer: a stateless hash of `x`, so values can be recomputed from an index.
    static func mix(_ x: UInt64) -> UInt64 {
        var z = x
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` distinct indices in `0..<upper`, ascending.
    mutating func sampleIndices(_ count: Int, below upper: Int) -> [Int] {
        var picked = Set<Int>()
        while picked.count < min(count, upper) { picked.insert(self.next(below: upper)) }
        return picked.sorted()
    }
}

/// `prefix` followed by `value` in `digits` zero-padded decimal digits (a small string up to 15 bytes).
func paddedKey(_ prefix: UInt8, _ value: Int, digits: Int) -> String {
    String(unsafeUninitializedCapacity: digits + 1) { buffer in
        buffer[0] = prefix
        var v = value
        for i in stride(from: digits, through: 1, by: -1) {
            buffer[i] = UInt8(ascii: "0") &+ UInt8(v % 10)
            v /= 10
        }
        return digits + 1
    }
}

// MARK: - Reads

/// Thrown when a read fails or a scenario cannot run.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Reads `query` once and waits for the snapshot. Reads are queued behind every write this thread
/// issued before, so when this returns all of them are applied.
func blockingGetData(_ query: DatabaseQuery) throws -> DataSnapshot {
    final class Outcome {
        var snapshot: DataSnapshot?
        var error: (any Error)?
    }
    let outcome = Outcome()
    let done = DispatchSemaphore(value: 0)
    query.getData { error, snapshot in
        outcome.error = error
        outcome.snapshot = snapshot
        done.signal()
    }
    done.wait()
    if let error = outcome.error { throw error }
    guard let snapshot = outcome.snapshot else { throw BenchError("getData returned no snapshot") }
    return snapshot
}

// MARK: - Durable storage

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
            guard fd >= 0 else { all = false; continue }
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
    guard let status = try blockingAwait({ try await db.storageStatus() }) else { throw BenchError("no storage status (in-memory database?)") }
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
