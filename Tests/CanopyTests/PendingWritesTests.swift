import CanopyCore
import CanopyTestSupport
import Testing

@testable import Canopy

/// The pending-writes trie behind `SnapshotMetadata.hasPendingWrites`, against a brute-force scan.
@Suite("Pending writes")
struct PendingWritesTests {
    static func path(_ string: String) -> DatabasePath {
        DatabasePath(string.split(separator: "/").map { ChildKey(String($0)) })
    }

    static func set(_ string: String) -> WriteOperation {
        .set(Self.path(string), WriteValue(node: .leaf(.int(1))))
    }

    static func update(_ string: String, _ entries: [String]) -> WriteOperation {
        WriteOperation(
            path: Self.path(string),
            entries: entries.map { .init(path: Self.path($0).keys, value: WriteValue(node: .leaf(.int(1)))) })
    }

    @Test("A set is pending at its location, above and below it; siblings and their children are not")
    func setOverlap() {
        let pending = PendingWrites()
        #expect(!pending.hasPending(overlapping: .root))
        let token = pending.begin(Self.set("a/b"))
        #expect(pending.hasPending(overlapping: Self.path("a/b")))
        #expect(pending.hasPending(overlapping: Self.path("a")))
        #expect(pending.hasPending(overlapping: .root))
        #expect(pending.hasPending(overlapping: Self.path("a/b/c/d")))
        #expect(!pending.hasPending(overlapping: Self.path("a/c")))
        #expect(!pending.hasPending(overlapping: Self.path("a/c/b")))
        #expect(!pending.hasPending(overlapping: Self.path("b")))
        #expect(!pending.hasPending(overlapping: Self.path("b/a/b")))
        pending.end(token)
        #expect(!pending.hasPending(overlapping: Self.path("a/b")))
        #expect(!pending.hasPending(overlapping: .root))
        #expect(pending.isEmpty)
    }

    @Test("A multi-path update is pending at its entries, not at the other children of its location")
    func updateOverlap() {
        let pending = PendingWrites()
        let token = pending.begin(Self.update("a", ["b/c", "d"]))
        #expect(pending.hasPending(overlapping: Self.path("a")))
        #expect(pending.hasPending(overlapping: Self.path("a/b")))
        #expect(pending.hasPending(overlapping: Self.path("a/b/c/x")))
        #expect(pending.hasPending(overlapping: Self.path("a/d")))
        #expect(!pending.hasPending(overlapping: Self.path("a/b/e")))
        #expect(!pending.hasPending(overlapping: Self.path("a/e")))
        pending.end(token)
        #expect(!pending.hasPending(overlapping: Self.path("a")))
    }

    @Test("A priority write is pending at its node; a set at the root covers everything")
    func priorityAndRoot() {
        let pending = PendingWrites()
        let priority = pending.begin(.setPriority(Self.path("a/b"), .value(.int(3))))
        #expect(pending.hasPending(overlapping: Self.path("a/b")))
        #expect(pending.hasPending(overlapping: Self.path("a/b/x")))
        #expect(!pending.hasPending(overlapping: Self.path("a/c")))
        let root = pending.begin(.set(.root, WriteValue(node: .empty)))
        #expect(pending.hasPending(overlapping: Self.path("z/y")))
        pending.end(root)
        #expect(!pending.hasPending(overlapping: Self.path("z/y")))
        #expect(pending.hasPending(overlapping: Self.path("a/b")))
        pending.end(priority)
        #expect(pending.isEmpty)
    }

    @Test("Writes at the same location count: the location stays pending until the last ends; ending twice is ignored")
    func counting() {
        let pending = PendingWrites()
        var settled: [[DatabasePath]] = []
        pending.settled = { settled.append(PendingWrites.locations(of: $0)) }
        let first = pending.begin(Self.set("a"))
        let second = pending.begin(Self.set("a"))
        pending.end(first)
        #expect(pending.hasPending(overlapping: Self.path("a")))
        pending.end(first)
        #expect(pending.hasPending(overlapping: Self.path("a")))
        #expect(pending.count == 1)
        pending.end(second)
        #expect(!pending.hasPending(overlapping: Self.path("a")))
        #expect(settled == [[Self.path("a")], [Self.path("a")]])
    }

    @Test("Thousands of writes that end unasked leave the long-lived ones pending and nothing else")
    func unaskedWrites() {
        let pending = PendingWrites()
        let kept = pending.begin(Self.set("keep/me"))
        for i in 0..<5000 {
            let token = pending.begin(Self.set("posts/p\(i)"))
            if i % 2 == 0 {
                pending.end(token)
            } else {
                _ = pending.begin(Self.set("other/o\(i)"))
                pending.end(token)
            }
        }
        #expect(pending.count == 2501)
        #expect(pending.hasPending(overlapping: Self.path("keep")))
        #expect(!pending.hasPending(overlapping: Self.path("posts")))
        #expect(pending.hasPending(overlapping: Self.path("other/o4999")))
        #expect(!pending.hasPending(overlapping: Self.path("other/o4998")))
        pending.end(kept)
        #expect(!pending.hasPending(overlapping: Self.path("keep")))
        #expect(pending.hasPending(overlapping: .root))
    }

    @Test("Random writes ended in random order agree with a scan of every pending location", arguments: [1, 2, 3, 4] as [UInt64])
    func model(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let keys = ["a", "b", "c", "1"]
        func randomPath(maxDepth: Int) -> String {
            (0..<Int.random(in: 0...maxDepth, using: &random)).map { _ in keys.randomElement(using: &random)! }.joined(separator: "/")
        }
        let pending = PendingWrites()
        var settled: [DatabasePath] = []
        pending.settled = { settled = PendingWrites.locations(of: $0) }
        // The oracle: every begun write's locations, scanned in full.
        var open: [(token: PendingWrites.Token, locations: [DatabasePath])] = []
        func oracle(_ path: DatabasePath) -> Bool {
            open.contains { write in write.locations.contains { $0.contains(path) || path.contains($0) } }
        }
        for _ in 0..<3000 {
            if open.isEmpty || Int.random(in: 0..<5, using: &random) < 3 {
                let location = randomPath(maxDepth: 3)
                let write: WriteOperation
                let locations: [DatabasePath]
                if Bool.random(using: &random) {
                    write = Self.set(location)
                    locations = [Self.path(location)]
                } else {
                    // Distinct first keys: entries of one update never overlap.
                    let firsts = keys.shuffled(using: &random).prefix(Int.random(in: 1...3, using: &random))
                    let entries = firsts.map { first in [first, randomPath(maxDepth: 2)].filter { !$0.isEmpty }.joined(separator: "/") }
                    write = Self.update(location, entries)
                    locations = entries.map { Self.path(location).appending(Self.path($0)) }
                }
                open.append((pending.begin(write), locations))
            } else {
                let ended = open.remove(at: Int.random(in: 0..<open.count, using: &random))
                pending.end(ended.token)
                #expect(settled == ended.locations)
            }
            #expect(pending.count == open.count)
            // Not after every step: writes also begin and end without ever being indexed.
            guard Int.random(in: 0..<3, using: &random) == 0 else { continue }
            for _ in 0..<4 {
                let query = Self.path(randomPath(maxDepth: 4))
                #expect(pending.hasPending(overlapping: query) == oracle(query), "at \(query)")
            }
        }
        for write in open { pending.end(write.token) }
        #expect(pending.isEmpty)
        #expect(!pending.hasPending(overlapping: .root))
    }
}
