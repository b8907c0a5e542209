import CanopyCore
import CanopyTestSupport
import Testing

private func sign(_ x: Int) -> Int { x < 0 ? -1 : (x > 0 ? 1 : 0) }

/// `ChildKey.compare` settles most pairs by each key's sort word (its integer value, or its first
/// 7 bytes ranked in UTF-16 order); these tests compare it with the general comparison and the
/// oracle on keys built to tie or differ around the 7th byte.
@Suite("Key sort words")
struct KeySortWordTests {
    /// Keys sharing prefixes of 5 to 9 bytes, with 1- to 4-byte scalars (including the 3-byte
    /// leads EE/EF and supplementary characters) across the 7-byte boundary, integer keys and
    /// their look-alikes, and push-ID-like keys.
    static func randomKeys(count: Int, seed: UInt64) -> [String] {
        var rng = SeededGenerator(seed: seed)
        let prefixes = [
            "", "rating", "ratings", "ratingT", "numRatings", "-Nabc12", "-Nabc123", "abcdef", "abcdefg", "é", "aé", "\u{1F600}",
        ]
        let pools: [ClosedRange<UInt32>] = [
            0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x80...0x7FF, 0x800...0xD7FF, 0xE000...0xEFFF, 0xF000...0xFFFF, 0x10000...0x10FFFF,
        ]
        return (0..<count).map { _ in
            switch Int.random(in: 0..<6, using: &rng) {
            case 0: return String(Int64.random(in: -3_000_000_000...3_000_000_000, using: &rng))
            case 1: return String(repeating: "0", count: Int.random(in: 0...8, using: &rng)) + String(Int.random(in: 0...99, using: &rng))
            case 2:
                return "-" + String(repeating: "0", count: Int.random(in: 0...7, using: &rng)) + String(Int.random(in: 0...9, using: &rng))
            default:
                var s = String.UnicodeScalarView(prefixes.randomElement(using: &rng)!.unicodeScalars)
                for _ in 0..<Int.random(in: 0...4, using: &rng) {
                    let pool = pools.randomElement(using: &rng)!
                    // Mostly the pool's first few scalars, so that ties and near misses are common.
                    let value =
                        Bool.random(using: &rng)
                        ? pool.lowerBound + UInt32.random(in: 0...2, using: &rng) : UInt32.random(in: pool, using: &rng)
                    s.append(Unicode.Scalar(value)!)
                }
                return s.isEmpty ? "k" : String(s)
            }
        }
    }

    /// The same key made each way a key is made: from any string, validated, parsed from a path,
    /// or as an array index.
    static func made(_ s: String, way: Int) -> ChildKey {
        switch way % 4 {
        case 1: return ChildKey(validating: s) ?? ChildKey(s)
        case 2: return (try? DatabasePath(validating: s, function: "test"))?.keys.first ?? ChildKey(s)
        case 3:
            if let i = Int(s), i >= 0, String(i) == s { return ChildKey(index: i) }
            return ChildKey(s)
        default: return ChildKey(s)
        }
    }

    @Test("compare with sort words matches the general comparison and the oracle; == is byte equality")
    func sortWordsMatchGeneralComparison() {
        let keys = Self.randomKeys(count: 240, seed: 1915)
        var checked = 0
        for (i, a) in keys.enumerated() {
            let x = Self.made(a, way: i)
            let utf8 = Array(a.utf8)
            for (j, b) in keys.enumerated() {
                let y = Self.made(b, way: j &+ 1)
                // Byte equality (the oracle's `==` is Swift's canonical equivalence).
                let same = utf8 == Array(b.utf8)
                let oracle = ReferenceKeyOrder.compare(a, b)
                let expected = same ? 0 : (oracle != 0 ? oracle : ReferenceKeyOrder.utf16(a, b))
                let c = sign(ChildKey.compare(x, y))
                let general = sign(ChildKey.compareWithoutOrder(x, y))
                // Recorded only on a mismatch: tens of thousands of pairs.
                if c != expected || general != expected || (x == y) != same || (same && x.hashValue != y.hashValue) {
                    Issue.record("\(Array(a.unicodeScalars)) vs \(Array(b.unicodeScalars)): \(c), general \(general), expected \(expected)")
                }
                checked += 1
            }
        }
        #expect(checked == keys.count * keys.count)
    }

    @Test("canonically equivalent but different strings are different keys, in UTF-16 order")
    func canonicalEquivalentsDiffer() {
        let pairs = [("é", "e\u{301}"), ("abcdefgé", "abcdefge\u{301}"), ("abcdefga\u{301}\u{316}", "abcdefga\u{316}\u{301}")]
        for (a, b) in pairs {
            #expect(ChildKey(a) != ChildKey(b))
            #expect(sign(ChildKey.compare(ChildKey(a), ChildKey(b))) == ReferenceKeyOrder.utf16(a, b))
            #expect(ChildKey(a) == ChildKey(validating: a))
        }
        var map = SortedMap<ChildKey, Int>()
        map.updateValue(1, forKey: ChildKey("abcdefgé"))
        map.updateValue(2, forKey: ChildKey("abcdefge\u{301}"))
        #expect(map.count == 2)
        #expect(map[ChildKey("abcdefgé")] == 1)
    }

    @Test("isPriorityKey is exactly .priority, made any way")
    func priorityKey() throws {
        for way in 0..<4 { #expect(Self.made(".priority", way: way).isPriorityKey) }
        for s in [".priorit", ".priorityx", ".priorit\u{0}y", "priority", ".Priority", ".priori", "avgRating"] {
            #expect(!ChildKey(s).isPriorityKey, "\(s)")
        }
        #expect(try DatabasePath(validating: "a/b", function: "test").keys.allSatisfy { !$0.isPriorityKey })
    }

    @Test("keys with NUL bytes (unvalidated) order as their bytes")
    func nulBytes() {
        let keys = ["a", "a\u{0}", "a\u{0}\u{0}", "a\u{0}b", "a\u{1}", "aaaaaaa", "aaaaaaa\u{0}", "aaaaaaa\u{0}b"]
        for a in keys {
            for b in keys {
                #expect(
                    sign(ChildKey.compare(ChildKey(a), ChildKey(b))) == ReferenceKeyOrder.utf16(a, b),
                    "\(Array(a.utf8)) vs \(Array(b.utf8))")
            }
        }
    }
}
