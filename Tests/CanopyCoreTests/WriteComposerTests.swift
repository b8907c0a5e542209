import CanopyCore
import CanopyTestSupport
import Testing

/// `WriteComposer.disjoint` against the brute-force definition: it combines writes exactly when no
/// entry of one targets a location at, above or below an entry of another, and the combined write
/// leaves the tree the writes leave applied one after another.
@Suite("Composing disjoint writes")
struct WriteComposerTests {
    private static let keys: [ChildKey] = ["a", "b", "c"]
    private static let priority = ChildKey(".priority")

    private static func path(_ rng: inout SeededGenerator, _ depth: ClosedRange<Int>) -> [ChildKey] {
        (0..<Int.random(in: depth, using: &rng)).map { _ in Self.keys.randomElement(using: &rng)! }
    }

    private static func node(_ rng: inout SeededGenerator) -> Node {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return .empty
        case 1:
            var node = Node.empty
            node.set(.leaf(.int(Int64.random(in: 0..<9, using: &rng))), at: ["a"])
            node.set(.leaf(.int(Int64.random(in: 0..<9, using: &rng))), at: ["c", "b"])
            return node
        default: return .leaf(.int(Int64.random(in: 0..<9, using: &rng)))
        }
    }

    /// A write of one to three entries that do not overlap one another (as a validated update's),
    /// some of them priorities.
    private static func write(_ rng: inout SeededGenerator) -> WriteOperation {
        let base = Self.path(&rng, 0...2)
        var entries: [WriteOperation.Entry] = []
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            var path = Self.path(&rng, 0...2)
            var value = Self.node(&rng)
            if Int.random(in: 0..<5, using: &rng) == 0 {
                path.append(Self.priority)
                value = .leaf(.int(Int64.random(in: 0..<9, using: &rng)))
            }
            guard !entries.contains(where: { $0.path.starts(with: path) || path.starts(with: $0.path) }) else { continue }
            entries.append(WriteOperation.Entry(path: path, value: WriteValue(node: value)))
        }
        return WriteOperation(path: DatabasePath(base), entries: entries)
    }

    /// The location an entry writes: its parent for a priority.
    private static func target(_ write: WriteOperation, _ entry: WriteOperation.Entry) -> [ChildKey] {
        write.path.keys + (entry.path.last == Self.priority ? Array(entry.path.dropLast()) : entry.path)
    }

    /// Whether an entry of one write targets a location at, above or below an entry of another, or
    /// a write removes data before a later one writes a value (a removal that empties a node drops
    /// its priority; a combined write would apply the value first).
    private static func overlap(_ writes: [WriteOperation]) -> Bool {
        for (i, write) in writes.enumerated()
        where write.entries.contains(where: { $0.path.last != Self.priority && !$0.value.node.isEmpty }) {
            if writes[..<i].contains(where: { $0.entries.contains { $0.path.last != Self.priority && $0.value.node.isEmpty } }) {
                return true
            }
        }
        for (i, a) in writes.enumerated() {
            for b in writes[(i + 1)...] {
                for x in a.entries {
                    for y in b.entries {
                        let (s, t) = (Self.target(a, x), Self.target(b, y))
                        if s.starts(with: t) || t.starts(with: s) { return true }
                    }
                }
            }
        }
        return false
    }

    @Test(
        "combines writes exactly when they do not overlap (nor remove before a later value), into one leaving the tree they leave in turn",
        arguments: 1...6)
    func disjoint(seed: UInt64) async throws {
        try await onComputeThreads { try self.disjointScenario(seed: seed) }
    }

    func disjointScenario(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        var combined = 0
        for round in 0..<3000 {
            let start = SyncEngine()
            for _ in 0..<4 { _ = try start.apply(Self.write(&rng), now: 0) }
            let writes = (0..<Int.random(in: 2...4, using: &rng)).map { _ in Self.write(&rng) }
            let composed = WriteComposer.disjoint(writes)
            #expect((composed == nil) == Self.overlap(writes), "round \(round): \(writes)")
            guard let composed else { continue }
            combined += 1
            #expect(composed.entries.count == writes.reduce(0) { $0 + $1.entries.count })
            let sequential = SyncEngine(root: start.root)
            for write in writes { _ = try sequential.apply(write, now: 0) }
            let once = SyncEngine(root: start.root)
            _ = try once.apply(composed, now: 0)
            #expect(
                once.root == sequential.root,
                "round \(round): from \(start.root.exportJSON), \(writes) as \(composed) made \(once.root.exportJSON), not \(sequential.root.exportJSON)"
            )
        }
        // Both outcomes are exercised.
        #expect(combined > 300 && combined < 2700)
    }

    @Test("a write without server values is set as the path that resolves them sets it", arguments: 1...3)
    func plainWrite(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed + 100)
        let z = ChildKey("z")
        var compared = 0
        for round in 0..<2000 {
            let start = SyncEngine()
            for _ in 0..<4 { _ = try start.apply(Self.write(&rng), now: 0) }
            let write = Self.write(&rng)
            // An entry with a server value at `z` (no other entry is at or above it) takes the write
            // through the resolving path; it is removed again before comparing. (Not where `z` would
            // replace a leaf at or above the written location.)
            let base = write.path.keys
            let underLeaf = (0...base.count).contains { start.root.node(at: Array(base.prefix($0))).leafValue != nil }
            guard !write.entries.contains(where: { $0.path.isEmpty }), !underLeaf else { continue }
            var resolving = write
            let placeholder = WriteValue.Placeholder(path: [], value: .timestamp, isPriority: false)
            resolving.entries.append(WriteOperation.Entry(path: [z], value: WriteValue(node: .leaf(.int(0)), placeholders: [placeholder])))
            let plain = SyncEngine(root: start.root)
            _ = try plain.apply(write, now: 7)
            let general = SyncEngine(root: start.root)
            _ = try general.apply(resolving, now: 7)
            let zPath = DatabasePath(write.path.keys + [z])
            #expect(general.node(at: zPath) == .leaf(.int(7)))
            _ = try general.apply(.set(zPath, WriteValue(node: .empty)), now: 7)
            #expect(
                plain.root == general.root,
                "round \(round): from \(start.root.exportJSON), \(write) made \(plain.root.exportJSON), not \(general.root.exportJSON)")
            compared += 1
        }
        #expect(compared > 500)
    }

    @Test("more than 16 entries are not combined")
    func many() {
        let writes = (0..<17).map { i in WriteOperation.set(DatabasePath([ChildKey("k\(i)")]), WriteValue(node: .leaf(.int(1)))) }
        #expect(WriteComposer.disjoint(writes) == nil)
        #expect(WriteComposer.disjoint(Array(writes.prefix(16)))?.entries.count == 16)
    }
}
