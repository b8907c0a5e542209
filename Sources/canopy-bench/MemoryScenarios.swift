import Canopy
import CanopyCore

// B8: resident bytes per leaf of a tree built by one bulk write (`setValue` of a big JSONValue).
// RSS is measured (after `malloc_trim(0)`) before the input is built and after the write is
// applied and the input dropped, so the delta is what the tree itself keeps.

enum MemoryShape: String, CaseIterable, Sendable {
    /// 1M int leaves under one parent, keys `k0000000`…
    case int
    /// 1,000 × 1,000 int leaves: `r000…r999` / `c000…c999`.
    case grid
    /// 1M 10-byte string leaves under one parent, keys as `int`.
    case string10
    /// Extra: as `int` with 20-character push IDs as keys (a heap-allocated string per key).
    case pushkey

    var scenario: String { "B8.memory.\(self.rawValue)" }

    /// The bytes-per-leaf target from the suite.
    var target: Double { self == .string10 ? 120 : 100 }

    var keyForm: String {
        switch self {
        case .int, .string10: return "k%07d (8 B)"
        case .grid: return "r%03d/c%03d (4 B)"
        case .pushkey: return "push id (20 B)"
        }
    }

    /// The deterministic value of leaf `index`.
    func value(_ index: Int) -> JSONValue {
        let hash = BenchRNG.mix(UInt64(index) &+ 0x5EED)
        if self == .string10 { return .string(paddedKey(UInt8(ascii: "s"), Int(hash % 1_000_000_000), digits: 9)) }
        return .int(Int64(hash % 1_000_000_000))
    }
}

func memoryPerLeaf(_ shape: MemoryShape, _ store: Store) throws -> BenchResult {
    let db = try Database.inMemory()
    defer { db.close() }
    let data = db.reference(withPath: "data")
    try db.reference(withPath: "warmup").queueSetValue(0)
    _ = try blockingGetData(db.reference(withPath: "warmup"))
    let rows = shape == .grid ? Bench.scaled(1000) : 1
    let columns = shape == .grid ? 1000 : Bench.scaled(1_000_000)
    let n = rows * columns
    var sampleRNG = BenchRNG(seed: 8)
    let sampleAt = sampleRNG.sampleIndices(32, below: n)
    var samples: [(path: String, value: JSONValue)] = []

    let rssBefore = trimmedRSSBytes()
    log("\(shape.scenario): \(n) leaves, keys \(shape.keyForm)")
    let t0 = monotonicNanos()
    let t1: UInt64
    var inputRSS = 0
    do {
        var input: JSONValue
        if shape == .grid {
            var object = [String: JSONValue](minimumCapacity: rows)
            for r in 0..<rows {
                var row = [String: JSONValue](minimumCapacity: columns)
                for c in 0..<columns { row[paddedKey(UInt8(ascii: "c"), c, digits: 3)] = shape.value(r * columns + c) }
                object[paddedKey(UInt8(ascii: "r"), r, digits: 3)] = .object(row)
            }
            input = .object(object)
            samples = sampleAt.map { i in
                (
                    paddedKey(UInt8(ascii: "r"), i / columns, digits: 3) + "/" + paddedKey(UInt8(ascii: "c"), i % columns, digits: 3),
                    shape.value(i)
                )
            }
        } else {
            var object = [String: JSONValue](minimumCapacity: n)
            var nextSample = 0
            for i in 0..<n {
                let key = shape == .pushkey ? data.childByAutoId().key! : paddedKey(UInt8(ascii: "k"), i, digits: 7)
                object[key] = shape.value(i)
                if nextSample < sampleAt.count && sampleAt[nextSample] == i {
                    samples.append((key, shape.value(i)))
                    nextSample += 1
                }
            }
            input = .object(object)
        }
        inputRSS = currentRSSBytes()
        t1 = monotonicNanos()
        try data.queueSetValue(input)
        input = .null  // the tree keeps its own nodes; drop the input
    }
    let snapshot = try blockingGetData(data)
    let t2 = monotonicNanos()
    let rssAfter = trimmedRSSBytes()

    var check = "ok"
    if snapshot.childrenCount != UInt(rows == 1 ? n : rows) {
        check = "FAIL childrenCount \(snapshot.childrenCount)"
    } else if shape == .grid {
        for r in 0..<rows {
            let count = snapshot.childSnapshot(forPath: paddedKey(UInt8(ascii: "r"), r, digits: 3)).childrenCount
            if count != UInt(columns) {
                check = "FAIL row \(r) has \(count) children"
                break
            }
        }
    }
    if check == "ok" {
        for (path, value) in samples where snapshot.childSnapshot(forPath: path).json != value {
            check = "FAIL \(path) reads back \(snapshot.childSnapshot(forPath: path).json.jsonString())"
            break
        }
    }
    let seconds = secondsBetween(t1, t2)
    let perLeaf = Double(rssAfter - rssBefore) / Double(n)
    return BenchResult(
        scenario: shape.scenario, store: store, n: n, seconds: seconds,
        extra: [
            ("bytes_per_leaf", .double(perLeaf, 1)), ("target_bytes_per_leaf", .int(Int(shape.target))),
            ("keys", .string(shape.keyForm)), ("input_seconds", .double(secondsBetween(t0, t1), 4)),
            ("rss_before_mb", .double(megabytes(rssBefore), 1)), ("rss_input_mb", .double(megabytes(inputRSS), 1)),
            ("rss_after_mb", .double(megabytes(rssAfter), 1)),
            // Fixed costs per entry of a children map: its key and its value slot.
            ("childkey_stride_b", .int(MemoryLayout<ChildKey>.stride)), ("node_stride_b", .int(MemoryLayout<Node>.stride)),
        ],
        check: check)
}
