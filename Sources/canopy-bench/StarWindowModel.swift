import CanopyCore

/// The brute-force model of a `orderByChild("starCount").limitToLast(window)` over posts: the
/// `(starCount, key)` pairs sorted, the window their last `window`; it counts the events each
/// change of a star count must raise on the window (B2a, B12.window).
struct StarWindowModel {
    struct Entry: Comparable {
        var star: Int
        var key: String
        static func < (a: Entry, b: Entry) -> Bool { a.star != b.star ? a.star < b.star : a.key < b.key }
    }

    let window: Int
    private var entries: [Entry]
    /// The events the changes so far must raise on the window.
    private(set) var expected = (added: 0, removed: 0, changed: 0, moved: 0)

    init(stars: [Int], keys: [String], window: Int) {
        self.window = window
        self.entries = zip(stars, keys).map { Entry(star: $0, key: $1) }.sorted()
    }

    /// `count` post keys (`p0000000`, `p0000001`, …), each with a random star count below 1,000,000.
    static func posts(_ count: Int, _ rng: inout BenchRNG) -> (keys: [String], stars: [Int]) {
        var keys: [String] = []
        var stars: [Int] = []
        for i in 0..<count {
            keys.append(paddedKey(UInt8(ascii: "p"), i, digits: 7))
            stars.append(rng.next(below: 1_000_000))
        }
        return (keys, stars)
    }

    /// The highest star count.
    var maxStar: Int { self.entries.last?.star ?? 0 }

    /// The keys in the window, in order.
    var shown: [String] { self.entries.suffix(self.window).map(\.key) }

    /// Moves `key` from star count `old` to `new`, counting the events it raises.
    mutating func change(_ key: String, from old: Int, to new: Int) {
        let before = Set(self.shown)
        self.entries.remove(at: self.insertionIndex(Entry(star: old, key: key)))
        let entry = Entry(star: new, key: key)
        self.entries.insert(entry, at: self.insertionIndex(entry))
        let after = Set(self.shown)
        self.expected.added += after.subtracting(before).count
        self.expected.removed += before.subtracting(after).count
        if before.contains(key) && after.contains(key) && old != new {
            self.expected.changed += 1
            self.expected.moved += 1
        }
    }

    private func insertionIndex(_ e: Entry) -> Int { leadingCount(self.entries.count) { self.entries[$0] < e } }
}
