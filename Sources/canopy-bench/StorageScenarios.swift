import Canopy
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// Durable storage (store `journal`: a database opened at a fresh temporary directory).
//   B1a.push.each            B1a's 200,000 pushes, `.periodic(100 ms)`; timed until the last
//                            write's completion (written to the OS); journal bytes per post
//   B1a.push.each.always     the same with `.always`: no wait per write, all completions awaited
//                            at the end (group commit)
//   B4a.open.checkpoint.*    open a checkpoint of 1,000,000 children `/items/{pushId}` =
//                            {name, value} until queryable; warm and page cache evicted
//   B4a.open.tail.*          the same plus a 200,000-record journal tail after the checkpoint
//   B4b.replay               open a journal of 1,000,000 small writes (no checkpoint)
//   B6.fsync.probe           raw 4 KB append + fsync loop on the benchmark directory's disk
//   B6.durable.1writer       20,000 pushes with `.always`, each awaited before the next
//   B6.durable.8writers      8 concurrent writers × 2,500 pushes, each awaiting its own writes
// The data of the B4 scenarios is written by a child process (this executable with
// CANOPY_BENCH_PREPARE set), so the measured process's peak RSS is the open's alone. Setup is
// never timed. Every scenario verifies its end state by reading the data back (after a reopen
// for the write scenarios).

/// Set in the child process that writes a B4 scenario's data: the database directory.
private let prepareDirectory = ProcessInfo.processInfo.environment["CANOPY_BENCH_PREPARE"]

/// CANOPY_BENCH_PREPARED=<dir>: open the data already prepared in `<dir>/db` (by running the
/// scenario with CANOPY_BENCH_PREPARE=<dir>/db) instead of preparing it; the directory is kept.
/// For profilers such as valgrind, under which the setup child process cannot be spawned.
private let preparedDirectory = ProcessInfo.processInfo.environment["CANOPY_BENCH_PREPARED"].map(BenchDirectory.init(existing:))

/// Runs this executable for `scenario` with CANOPY_BENCH_PREPARE=`directory` and waits.
private func prepareInChild(_ scenario: String, directory: String) throws {
    let exe =
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")).map(URL.init(fileURLWithPath:))
        ?? URL(fileURLWithPath: CommandLine.arguments[0])
    let child = Process()
    child.executableURL = exe
    child.arguments = [scenario, Store.journal.rawValue]
    var environment = ProcessInfo.processInfo.environment
    environment["CANOPY_BENCH_PREPARE"] = directory
    child.environment = environment
    try child.run()
    child.waitUntilExit()
    guard child.terminationReason == .exit, child.terminationStatus == 0 else {
        throw BenchError("preparing \(scenario) in a child process failed (status \(child.terminationStatus))")
    }
}

// MARK: - Data

/// A Firebase-style push id for item `i`, deterministic: 8 characters of time (one millisecond
/// per item from a fixed start, so ids sort by `i`) and 12 pseudo-random characters.
func pushStyleKey(_ i: Int) -> String {
    let alphabet = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8)
    return String(unsafeUninitializedCapacity: 20) { buffer in
        var time = UInt64(1_700_000_000_000 + i)
        for position in stride(from: 7, through: 0, by: -1) {
            buffer[position] = alphabet[Int(time & 63)]
            time >>= 6
        }
        var random = BenchRNG.mix(UInt64(i) &+ 0x5EED)
        var more = BenchRNG.mix(UInt64(i) ^ 0xA5A5_A5A5)
        for position in 8..<20 {
            if position == 18 {
                random = more
                more = 0
            }
            buffer[position] = alphabet[Int(random & 63)]
            random >>= 6
        }
        return 20
    }
}

/// B4a items: `{name: "item <i mod 100000>" (~10 B), value: int}`.
private func itemName(_ i: Int) -> String { "item \(i % 100_000)" }
private func itemValue(_ i: Int) -> Int { Int(BenchRNG.mix(UInt64(i)) % 1_000_000) }

/// The B4a journal tail: record `j` sets the value of item `5 j` to `1_000_000 + j`.
private let tailStride = 5

private func expectedItemValue(_ i: Int, tail: Int) -> Int {
    i % tailStride == 0 && i / tailStride < tail ? 1_000_000 + i / tailStride : itemValue(i)
}

/// B4b records: record `i` sets `/scores/s<i mod 100000>` to `i`.
private let scoreKeys = 100_000

// MARK: - B1a on the journal

/// B1a.push.each on the journal store: `.periodic(100 ms)`.
func pushEachJournal(_ store: Store) throws -> BenchResult {
    try pushEachDurable("B1a.push.each", policy: .periodic(.milliseconds(100)), store)
}

/// B1a on a durable database: N pushes, each `setValue(_:withCompletionBlock:)` without waiting;
/// timed until the last completion fired (under `.periodic`: written to the OS; under `.always`:
/// fsynced, shared by group commit). Then closed, reopened and read back.
func pushEachDurable(_ name: String, policy: SyncPolicy, _ store: Store) throws -> BenchResult {
    let n = Bench.scaled(200_000)
    let directory = try BenchDirectory("b1a")
    defer { directory.remove() }
    var db = try openDurable(directory.databasePath, policy)
    let posts = db.reference(withPath: "posts")
    var generator = PostGenerator(seed: 1)
    var samples = PostSamples(below: n)
    var latencies = [UInt64](repeating: 0, count: n)
    let warmup = CompletionCounter()
    db.reference(withPath: "warmup").setValue(0) { error, _ in warmup.complete(error) }
    warmup.wait(for: 1)
    let bytesBefore = try blockingStorageStatus(db).journalBytes

    let counter = CompletionCounter()
    log("\(name): \(n) setValue calls, sync \(policy)")
    let t0 = monotonicNanos()
    latencies.withUnsafeMutableBufferPointer { latency in
        for i in 0..<n {
            let post = generator.post(i)
            let ref = posts.childByAutoId()
            let value = post.dictionary
            let start = monotonicNanos()
            ref.setValue(value) { error, _ in counter.complete(error) }
            latency[i] = monotonicNanos() &- start
            samples.note(i, key: ref.key!, post: post)
        }
    }
    let t1 = monotonicNanos()
    counter.wait(for: n)
    let t2 = monotonicNanos()
    let status = try blockingStorageStatus(db)
    let journalBytes = status.journalBytes - bytesBefore
    let fileBytes = directory.databaseBytes()
    db.close()

    // Reopen and read every post back.
    let r0 = monotonicNanos()
    db = try openDurable(directory.databasePath, policy)
    defer { db.close() }
    let snapshot = try blockingGetData(db.reference(withPath: "posts"))
    let reopenSeconds = secondsSince(r0)
    var check = verifyPosts(snapshot, count: n, samples: samples.posts)
    if let error = counter.firstError { check = "FAIL completion error \(error)" }
    if status.checkpointSequence != 0 { log("note: a checkpoint ran during the writes (journal bytes then cover the tail only)") }
    let summary = LatencySummary(sortingNanos: &latencies)
    let seconds = secondsBetween(t0, t2)
    return BenchResult(
        scenario: name, store: store, n: n, seconds: seconds,
        extra: [
            ("sync", .string(policy.description)),
            ("writes_per_s", .int(Int((Double(n) / seconds).rounded()))),
            ("issue_seconds", .double(secondsBetween(t0, t1), 4)),
            ("drain_seconds", .double(secondsBetween(t1, t2), 4)),
        ] + summary.fields + [
            ("leaves", .int(3 * n)),
            ("journal_bytes_per_post", .double(Double(journalBytes) / Double(n), 1)),
            ("journal_bytes_per_leaf", .double(Double(journalBytes) / Double(3 * n), 1)),
            ("file_mb", .double(megabytes(fileBytes), 1)),
            ("checkpoint_during_run", .bool(status.checkpointSequence != 0)),
            ("reopen_seconds", .double(reopenSeconds, 4)),
        ],
        check: check)
}

// MARK: - B4a / B4b: opening

/// What a B4 open scenario reads.
private enum OpenWorkload {
    /// 1M items checkpointed, then `tail` single-leaf writes in the journal.
    case items(tail: Int)
    /// 1M small writes in the journal, no checkpoint.
    case replay
}

/// Writes the data of a B4 scenario into `path` (in the child process), then closes it.
private func prepareOpen(_ workload: OpenWorkload, path: String) throws {
    let db = try openDurable(path, .never, checkpointThreshold: Int.max)
    let done = CompletionCounter()
    var issued = 0
    switch workload {
    case .items(let tail):
        let n = Bench.scaled(1_000_000)
        let items = db.reference(withPath: "items")
        for values in ItemBatches(count: n, item: { ["name": itemName($0), "value": itemValue($0)] }) {
            items.updateChildValues(values) { error, _ in done.complete(error) }
            issued += 1
        }
        done.wait(for: issued)
        try blockingCheckpoint(db)
        let tailCount = min(tail, n / tailStride)
        for j in 0..<tailCount {
            items.child(pushStyleKey(tailStride * j)).child("value").setValue(1_000_000 + j) { error, _ in done.complete(error) }
        }
        issued += tailCount
        log("prepared \(n) items, checkpoint, \(tailCount) journal records after it")
    case .replay:
        let n = Bench.scaled(1_000_000)
        let scores = db.reference(withPath: "scores")
        let refs = (0..<min(n, scoreKeys)).map { scores.child(paddedKey(UInt8(ascii: "s"), $0, digits: 6)) }
        for i in 0..<n {
            refs[i % refs.count].setValue(i) { error, _ in done.complete(error) }
        }
        issued += n
        log("prepared \(n) journal records")
    }
    done.wait(for: issued)
    if let error = done.firstError { throw BenchError("a setup write failed: \(error)") }
    db.close()
}

/// B4a/B4b: `Database(path:)` until a read of one child answers, on data written by a child
/// process; warm (files read once first) or cold (synced, then evicted from the page cache).
private func openScenario(_ name: String, _ workload: OpenWorkload, cold: Bool, _ store: Store) throws -> BenchResult {
    if let prepareDirectory {
        try prepareOpen(workload, path: prepareDirectory)
        exit(0)
    }
    let directory: BenchDirectory
    if let existing = preparedDirectory {
        directory = existing  // kept: prepared by hand (for profilers, which cannot spawn the child)
    } else {
        directory = try BenchDirectory("b4")
        let p0 = monotonicNanos()
        try prepareInChild(name, directory: directory.databasePath)
        log("\(name): setup took \(String(format: "%.1f", secondsSince(p0))) s")
    }
    defer { if preparedDirectory == nil { directory.remove() } }
    let fileBytes = directory.databaseBytes()
    let checkpointBytes = directory.databaseBytes(prefix: "checkpoint-")
    let journalBytes = directory.databaseBytes(prefix: "journal-")
    var evicted = false
    if cold {
        evicted = directory.evictFromPageCache()
    } else {
        directory.warmPageCache()
    }

    // The key read right after opening: the last item (or score) written.
    let probePath: String
    let n: Int
    switch workload {
    case .items:
        n = Bench.scaled(1_000_000)
        probePath = "items/\(pushStyleKey(n - 1))"
    case .replay:
        n = Bench.scaled(1_000_000)
        probePath = "scores/" + paddedKey(UInt8(ascii: "s"), (n - 1) % min(n, scoreKeys), digits: 6)
    }
    let t0 = monotonicNanos()
    let db = try openDurable(directory.databasePath, .periodic(.milliseconds(100)))
    let t1 = monotonicNanos()
    let probe = try blockingGetData(db.reference(withPath: probePath))
    let t2 = monotonicNanos()
    defer { db.close() }
    let seconds = secondsBetween(t0, t2)

    // Verify: counts, replayed records and sampled values.
    let status = try blockingStorageStatus(db)
    var check = "ok"
    var sampleRNG = BenchRNG(seed: 44)
    var extra: [(String, JSONField)] = []
    let leaves: Int
    switch workload {
    case .items(let tail):
        let tailCount = min(tail, n / tailStride)
        leaves = 2 * n
        if status.leafCount != leaves { check = "FAIL leaves \(status.leafCount) != \(leaves)" }
        if status.replayedAtOpen != tailCount { check = "FAIL replayed \(status.replayedAtOpen) != \(tailCount)" }
        if (probe.childSnapshot(forPath: "value").value as? Int) != expectedItemValue(n - 1, tail: tailCount) {
            check = "FAIL probe \(probe.json.jsonString())"
        }
        let items = try blockingGetData(db.reference(withPath: "items"))
        if items.childrenCount != UInt(n) { check = "FAIL children \(items.childrenCount) != \(n)" }
        for i in sampleRNG.sampleIndices(64, below: n) + [0, tailStride * (tailCount - 1)] where i >= 0 {
            let item = items.childSnapshot(forPath: pushStyleKey(i))
            let name = item.childSnapshot(forPath: "name").value as? String
            let value = item.childSnapshot(forPath: "value").value as? Int
            if name != itemName(i) || value != expectedItemValue(i, tail: tailCount) {
                check = "FAIL item \(i) reads back \(item.json.jsonString())"
            }
        }
        extra = [("children", .int(n)), ("tail_records", .int(tailCount))]
    case .replay:
        let keys = min(n, scoreKeys)
        leaves = keys
        if status.leafCount != keys { check = "FAIL leaves \(status.leafCount) != \(keys)" }
        if status.replayedAtOpen != n { check = "FAIL replayed \(status.replayedAtOpen) != \(n)" }
        let scores = try blockingGetData(db.reference(withPath: "scores"))
        for k in sampleRNG.sampleIndices(64, below: keys) + [0, keys - 1] {
            let expected = ((n - 1 - k) / keys) * keys + k  // the last i ≡ k (mod keys)
            let value = scores.childSnapshot(forPath: paddedKey(UInt8(ascii: "s"), k, digits: 6)).value as? Int
            if value != expected { check = "FAIL score \(k) = \(value.map(String.init) ?? "nil") != \(expected)" }
        }
        if probe.value as? Int != n - 1 { check = "FAIL probe \(probe.json.jsonString())" }
        extra = [("records", .int(n)), ("records_per_s", .int(Int((Double(n) / seconds).rounded())))]
    }
    let mb = megabytes(fileBytes)
    return BenchResult(
        scenario: name, store: store, n: n, seconds: seconds,
        extra: extra + [
            ("open_seconds", .double(secondsBetween(t0, t1), 4)),
            ("first_read_seconds", .double(secondsBetween(t1, t2), 4)),
            ("leaves", .int(leaves)),
            ("leaves_per_s", .int(Int((Double(leaves) / seconds).rounded()))),
            ("replayed", .int(status.replayedAtOpen)),
            ("file_mb", .double(mb, 1)),
            ("checkpoint_mb", .double(megabytes(checkpointBytes), 1)),
            ("journal_mb", .double(megabytes(journalBytes), 1)),
            ("mb_per_s", .double(mb / seconds, 1)),
            ("bytes_per_leaf", .double(Double(fileBytes) / Double(leaves), 1)),
            ("page_cache", .string(cold ? (evicted ? "evicted" : "NOT evicted") : "warm")),
        ],
        check: check)
}

func openCheckpoint(_ name: String, tail: Int, cold: Bool, _ store: Store) throws -> BenchResult {
    try openScenario(name, .items(tail: tail == 0 ? 0 : Bench.scaled(tail)), cold: cold, store)
}

func openReplay(_ name: String, cold: Bool, _ store: Store) throws -> BenchResult {
    try openScenario(name, .replay, cold: cold, store)
}

// MARK: - B6: durability

/// Appends `blockBytes` (4 KB) and fsyncs, in a loop, for `seconds` in `directory`: (fsyncs, elapsed seconds).
func fsyncProbe(in directory: String, seconds: Double, blockBytes: Int = 4096) throws -> (count: Int, seconds: Double) {
    let path = directory + "/fsync-probe.dat"
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644)
    guard fd >= 0 else { throw BenchError("cannot create \(path): errno \(errno)") }
    defer {
        close(fd)
        unlink(path)
    }
    let block = [UInt8](repeating: 0xA5, count: blockBytes)
    var count = 0
    let start = monotonicNanos()
    let limit = UInt64(seconds * 1e9)
    while monotonicNanos() &- start < limit {
        let written = block.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == block.count else { throw BenchError("write to \(path) failed: errno \(errno)") }
        guard fsync(fd) == 0 else { throw BenchError("fsync of \(path) failed: errno \(errno)") }
        count += 1
    }
    return (count, secondsSince(start))
}

/// B6.fsync.probe: the disk's raw append+fsync rate (n fsyncs in ~2 s).
func fsyncProbeScenario(_ store: Store) throws -> BenchResult {
    let directory = try BenchDirectory("b6")
    defer { directory.remove() }
    let (count, seconds) = try fsyncProbe(in: directory.path, seconds: 2 * min(1, Bench.scale * 20))
    // The journal appends ~200 B records, mostly within the file's last block: the same loop
    // with 256-byte appends, for comparison (not timed as the scenario).
    let small = try fsyncProbe(in: directory.path, seconds: min(1, Bench.scale * 20), blockBytes: 256)
    let check = count > 0 && small.count > 0 ? "ok" : "FAIL no fsync completed"
    return BenchResult(
        scenario: "B6.fsync.probe", store: store, n: count, seconds: seconds,
        extra: [
            ("fsyncs_per_s", .int(Int((Double(count) / seconds).rounded()))), ("block_bytes", .int(4096)),
            ("us_per_fsync", .double(seconds * 1e6 / Double(count), 1)),
            ("fsyncs_per_s_256b", .int(Int((Double(small.count) / small.seconds).rounded()))),
        ],
        check: check)
}

/// B6.durable: `writers` concurrent tasks push `total / writers` posts each under `.always`, each
/// awaiting every write's completion (on disk) before its next; then reopened and read back.
func durableWriters(_ name: String, writers: Int, _ store: Store) throws -> BenchResult {
    let total = Bench.scaled(20_000)
    let perWriter = max(1, total / writers)
    let n = perWriter * writers
    let directory = try BenchDirectory("b6")
    defer { directory.remove() }
    let probe = try fsyncProbe(in: directory.path, seconds: 1)
    let probeRate = Double(probe.count) / probe.seconds
    let writeDB = try openDurable(directory.databasePath, .always)
    let posts = writeDB.reference(withPath: "posts")
    try blockingAwait { _ = try await writeDB.reference(withPath: "warmup").setValue(0) }

    log("\(name): \(writers) writers × \(perWriter) awaited pushes, probe \(Int(probeRate)) fsyncs/s")
    let t0 = monotonicNanos()
    let results: [(latencies: [UInt64], samples: [(String, PostGenerator.Post)])] = try blockingAwait {
        try await withThrowingTaskGroup(of: (Int, [UInt64], [(String, PostGenerator.Post)]).self) { group in
            for w in 0..<writers {
                group.addTask {
                    var generator = PostGenerator(seed: 100 + UInt64(w))
                    var latencies: [UInt64] = []
                    latencies.reserveCapacity(perWriter)
                    var samples: [(String, PostGenerator.Post)] = []
                    for i in 0..<perWriter {
                        let post = generator.post(w * perWriter + i)
                        let ref = posts.childByAutoId()
                        let start = monotonicNanos()
                        try await ref.setValue(post.dictionary)
                        latencies.append(monotonicNanos() &- start)
                        if i % max(1, perWriter / 4) == 0 { samples.append((ref.key!, post)) }
                    }
                    return (w, latencies, samples)
                }
            }
            var collected = [(latencies: [UInt64], samples: [(String, PostGenerator.Post)])](repeating: ([], []), count: writers)
            for try await (w, latencies, samples) in group { collected[w] = (latencies, samples) }
            return collected
        }
    }
    let seconds = secondsSince(t0)
    writeDB.close()

    let db = try openDurable(directory.databasePath, .always)
    defer { db.close() }
    let snapshot = try blockingGetData(db.reference(withPath: "posts"))
    let check = verifyPosts(snapshot, count: n, samples: results.flatMap { $0.samples }.map { (key: $0.0, post: $0.1) })
    var latencies = results.flatMap { $0.latencies }
    let summary = LatencySummary(sortingNanos: &latencies)
    let rate = Double(n) / seconds
    return BenchResult(
        scenario: name, store: store, n: n, seconds: seconds,
        extra: [
            ("sync", .string("always")), ("writers", .int(writers)),
            ("writes_per_s", .int(Int(rate.rounded()))),
            ("probe_fsyncs_per_s", .int(Int(probeRate.rounded()))),
            ("ratio_to_probe", .double(rate / probeRate, 2)),
        ] + summary.fields,
        check: check)
}

/// The storage scenarios, for main.swift's list (B1a.push.each on `journal` is registered with
/// the memory one: see ``pushEachJournal(_:)``).
let storageScenarios: [Scenario] = [
    Scenario(name: "B1a.push.each.always", stores: [.journal]) { try pushEachDurable("B1a.push.each.always", policy: .always, $0) },
    Scenario(name: "B4a.open.checkpoint.warm", stores: [.journal]) {
        try openCheckpoint("B4a.open.checkpoint.warm", tail: 0, cold: false, $0)
    },
    Scenario(name: "B4a.open.checkpoint.cold", stores: [.journal]) {
        try openCheckpoint("B4a.open.checkpoint.cold", tail: 0, cold: true, $0)
    },
    Scenario(name: "B4a.open.tail.warm", stores: [.journal]) { try openCheckpoint("B4a.open.tail.warm", tail: 200_000, cold: false, $0) },
    Scenario(name: "B4a.open.tail.cold", stores: [.journal]) { try openCheckpoint("B4a.open.tail.cold", tail: 200_000, cold: true, $0) },
    Scenario(name: "B4b.replay", stores: [.journal]) { try openReplay("B4b.replay", cold: false, $0) },
    Scenario(name: "B6.fsync.probe", stores: [.journal], run: fsyncProbeScenario),
    Scenario(name: "B6.durable.1writer", stores: [.journal]) { try durableWriters("B6.durable.1writer", writers: 1, $0) },
    Scenario(name: "B6.durable.8writers", stores: [.journal]) { try durableWriters("B6.durable.8writers", writers: 8, $0) },
]
