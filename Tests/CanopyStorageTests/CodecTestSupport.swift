import CanopyCore
import CanopyStorage
import CanopyTestSupport
import Testing

/// Random trees and writes covering every case a node can hold, for round-trip tests.
struct RandomTrees {
    var rng: SeededGenerator

    init(seed: UInt64) { self.rng = SeededGenerator(seed: seed) }

    static let specialKeys = [
        "5", "-3", "007", "0", "-0", "00", "2147483647", "2147483648", "-2147483648", "a", "b", "name", "value", "é", "日本", "😀", "x y",
        "\u{E000}", "-", "a-b",
    ]
    static let specialStrings = [
        "", "\0", "a\0b", "😀🎉", "日本語", "\u{10FFFF}", String(repeating: "z", count: 70), String(repeating: "ü", count: 40), "\"quoted\"\n\t",
    ]
    static let specialDoubles: [Double] = [
        -0.0, 0.0, 1.5, -2.25, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude, .greatestFiniteMagnitude, 1e300, 3.0,
    ]
    static let specialInts: [Int64] = [.min, .max, 0, 63, 64, -1, -64, 127, 128, 1 << 35]

    mutating func int(_ n: Int) -> Int { Int(self.rng.next() % UInt64(n)) }

    mutating func key() -> ChildKey {
        if self.int(3) == 0 { return ChildKey(Self.specialKeys[self.int(Self.specialKeys.count)]) }
        if self.int(4) == 0 { return ChildKey(String(self.int(200) - 20)) }
        let letters = Array("abcdefghijklmnopqrstuvwxyz-_0123456789ABCXYZ".utf8)
        let length = 1 + self.int(22)
        return ChildKey(String(decoding: (0..<length).map { _ in letters[self.int(letters.count)] }, as: UTF8.self))
    }

    mutating func leaf() -> LeafValue {
        switch self.int(7) {
        case 0: return .bool(self.int(2) == 0)
        case 1: return .int(Self.specialInts[self.int(Self.specialInts.count)])
        case 2: return .int(Int64(bitPattern: self.rng.next()) >> UInt64(self.int(64)))
        case 3: return .double(Self.specialDoubles[self.int(Self.specialDoubles.count)])
        case 4: return .double(Double(bitPattern: self.rng.next() & 0x7FEF_FFFF_FFFF_FFFF))
        case 5: return .string(Self.specialStrings[self.int(Self.specialStrings.count)])
        default: return .string(self.key().string + String(self.int(1000)))
        }
    }

    mutating func priority() -> LeafValue? {
        switch self.int(8) {
        case 0: return .int(Int64(self.int(100)) - 50)
        case 1: return .double(Double(self.int(1000)) / 7)
        case 2: return .string(self.key().string)
        default: return nil
        }
    }

    /// A non-empty node.
    mutating func node(depth: Int) -> Node {
        if depth <= 0 || self.int(3) == 0 {
            return Node.leaf(self.leaf()).withPriority(self.priority())
        }
        var children = SortedMap<ChildKey, Node>()
        let width = self.int(12) == 0 ? 40 + self.int(60) : 1 + self.int(5)
        if width > 8 {
            // Wide nodes (several B+tree leaves, not key-table candidates) hold leaves only.
            for _ in 0..<width { _ = children.updateValue(Node.leaf(self.leaf()).withPriority(self.priority()), forKey: self.key()) }
            return Node.from(children: children, priority: self.priority())
        }
        for _ in 0..<width { _ = children.updateValue(self.node(depth: depth - 1 - self.int(2)), forKey: self.key()) }
        return Node.from(children: children, priority: self.priority())
    }

    mutating func placeholder() -> ServerValuePlaceholder {
        switch self.int(3) {
        case 0: return .timestamp
        case 1: return .increment(.int(Self.specialInts[self.int(Self.specialInts.count)]))
        default: return .increment(.double(Self.specialDoubles[self.int(Self.specialDoubles.count)]))
        }
    }

    mutating func path(_ maxCount: Int) -> [ChildKey] { (0..<self.int(maxCount + 1)).map { _ in self.key() } }

    mutating func write() -> WriteOperation {
        var entries: [WriteOperation.Entry] = []
        for _ in 0..<(1 + self.int(4)) {
            let isPriority = self.int(6) == 0
            let path = self.path(3) + (isPriority ? [ChildKey(".priority")] : [])
            let node: Node = self.int(5) == 0 ? .empty : self.node(depth: 3)
            var placeholders: [WriteValue.Placeholder] = []
            for _ in 0..<self.int(3) {
                placeholders.append(WriteValue.Placeholder(path: self.path(2), value: self.placeholder(), isPriority: self.int(2) == 0))
            }
            entries.append(WriteOperation.Entry(path: path, value: WriteValue(node: node, placeholders: placeholders)))
        }
        var keys = self.path(4)
        if self.int(8) == 0 { keys.insert(ChildKey(".info"), at: 0) }
        return WriteOperation(path: DatabasePath(keys), entries: entries, requiresExistingNode: self.int(3) == 0)
    }
}

/// Node equality plus everything `==` does not look at: exact leaf types and bits, key strings,
/// priorities' types, and the cached count of prioritized children.
func identical(_ a: Node, _ b: Node) -> Bool {
    switch (a, b) {
    case (.empty, .empty): return true
    case (.leaf(let x), .leaf(let y)): return identical(x, y)
    case (.prioritizedLeaf(let x), .prioritizedLeaf(let y)): return identical(x.value, y.value) && identical(x.priority, y.priority)
    case (.children(let x), .children(let y)):
        guard x.map.count == y.map.count, x.prioritizedChildren == y.prioritizedChildren else { return false }
        switch (x.priority, y.priority) {
        case (nil, nil): break
        case (let p?, let q?): guard identical(p, q) else { return false }
        default: return false
        }
        guard x.map.checkInvariants(), y.map.checkInvariants() else { return false }
        var expectedPrioritized = 0
        for ((kx, nx), (ky, ny)) in zip(x.map, y.map) {
            guard kx.string == ky.string, kx.integerValue == ky.integerValue, identical(nx, ny), !ny.isEmpty else { return false }
            if ny.priority != nil { expectedPrioritized += 1 }
        }
        return expectedPrioritized == y.prioritizedChildren
    default: return false
    }
}

func identical(_ a: LeafValue, _ b: LeafValue) -> Bool {
    switch (a, b) {
    case (.bool(let x), .bool(let y)): return x == y
    case (.int(let x), .int(let y)): return x == y
    case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
    case (.string(let x), .string(let y)): return Array(x.utf8) == Array(y.utf8)
    default: return false
    }
}

func identical(_ a: WriteOperation, _ b: WriteOperation) -> Bool {
    guard a.path.keys.map(\.string) == b.path.keys.map(\.string), a.requiresExistingNode == b.requiresExistingNode,
        a.entries.count == b.entries.count
    else { return false }
    for (x, y) in zip(a.entries, b.entries) {
        guard x.path.map(\.string) == y.path.map(\.string), identical(x.value.node, y.value.node),
            x.value.placeholders.count == y.value.placeholders.count
        else { return false }
        for (p, q) in zip(x.value.placeholders, y.value.placeholders) {
            guard p.path.map(\.string) == q.path.map(\.string), p.isPriority == q.isPriority else { return false }
            switch (p.value, q.value) {
            case (.timestamp, .timestamp): break
            case (.increment(let d), .increment(let e)): guard identical(d, e) else { return false }
            default: return false
            }
        }
    }
    return true
}

func encoded(_ node: Node) -> [UInt8] {
    var w = ByteWriter()
    NodeCodec.encode(node, into: &w)
    return w.bytes
}

/// Decodes all of `bytes` with `decode`; bytes left over are an error.
func decodeWhole<Value>(_ bytes: [UInt8], _ decode: (inout ByteReader) throws(CodecError) -> Value) throws(CodecError) -> Value {
    let result = bytes.withUnsafeBytes { raw in
        Result { () throws(CodecError) -> Value in
            var r = ByteReader(raw)
            let value = try decode(&r)
            guard r.isAtEnd else { throw CodecError(offset: r.offset, reason: "trailing bytes") }
            return value
        }
    }
    return try result.get()
}

/// Expects `decode` to fail on every proper prefix of `bytes`, with an offset within it.
func expectEveryTruncationFails<T>(
    _ bytes: [UInt8], _ decode: ([UInt8]) throws(CodecError) -> T, sourceLocation: SourceLocation = #_sourceLocation
) {
    for length in 0..<bytes.count {
        do {
            _ = try decode(Array(bytes[..<length]))
            Issue.record("decoded a truncation to \(length) bytes", sourceLocation: sourceLocation)
        } catch {
            #expect(error.offset <= length, sourceLocation: sourceLocation)
        }
    }
}

func decodeNode(_ bytes: [UInt8]) throws(CodecError) -> Node {
    try decodeWhole(bytes) { r throws(CodecError) in try NodeCodec.decode(from: &r) }
}

func decodeCheckpoint(_ bytes: [UInt8], fileName: String = "checkpoint-7.canopy") throws(DatabaseError) -> (root: Node, sequence: UInt64) {
    let result = bytes.withUnsafeBytes { raw in Result { () throws(DatabaseError) in try CheckpointFormat.decode(raw, fileName: fileName) }
    }
    return try result.get()
}
