import CanopyCore
import CanopyTestSupport
import Testing

/// A straightforward restatement of the JS SDK's `nameCompare` (see *Ordering and Keys*), used as
/// an oracle.
enum ReferenceKeyOrder {
    /// `^-?(0*)\d{1,10}$` within the Int32 range.
    static func integer(_ s: String) -> Int64? {
        var digits = Substring(s)
        var negative = false
        if digits.first == "-" {
            negative = true
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.unicodeScalars.allSatisfy({ $0.value >= 48 && $0.value <= 57 }) else { return nil }
        let significant = digits.drop { $0 == "0" }
        let body = significant.isEmpty ? "0" : significant
        guard body.count <= 10, let magnitude = Int64(body) else { return nil }
        let value = negative ? -magnitude : magnitude
        guard value >= Int64(Int32.min), value <= Int64(Int32.max) else { return nil }
        return value
    }

    static func utf16(_ a: String, _ b: String) -> Int {
        let x = Array(a.utf16)
        let y = Array(b.utf16)
        for (p, q) in zip(x, y) where p != q { return p < q ? -1 : 1 }
        return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
    }

    static func compare(_ a: String, _ b: String) -> Int {
        if a == b { return 0 }
        switch (integer(a), integer(b)) {
        case (let x?, let y?):
            if x != y { return x < y ? -1 : 1 }
            if a.utf16.count != b.utf16.count { return a.utf16.count < b.utf16.count ? -1 : 1 }
            return utf16(a, b)  // the "-0" / "00" tie, broken by string order
        case (.some, nil): return -1
        case (nil, .some): return 1
        case (nil, nil): return utf16(a, b)
        }
    }
}

private func sign(_ x: Int) -> Int { x < 0 ? -1 : (x > 0 ? 1 : 0) }

private func cmp(_ a: String, _ b: String) -> Int { sign(ChildKey.compare(ChildKey(a), ChildKey(b))) }

private func path(_ s: String) throws -> DatabasePath { try DatabasePath(validating: s, function: "test") }

/// Checks that `keys` is strictly ascending in key order, pairwise and via sorting.
private func expectStrictlyAscending(_ keys: [String], sourceLocation: SourceLocation = #_sourceLocation) {
    for i in keys.indices {
        #expect(cmp(keys[i], keys[i]) == 0, "\(keys[i]) vs itself", sourceLocation: sourceLocation)
        for j in keys.indices where i < j {
            #expect(cmp(keys[i], keys[j]) == -1, "\(keys[i]) < \(keys[j])", sourceLocation: sourceLocation)
            #expect(cmp(keys[j], keys[i]) == 1, "\(keys[j]) > \(keys[i])", sourceLocation: sourceLocation)
        }
    }
    var rng = SeededGenerator(seed: 7)
    #expect(keys.shuffled(using: &rng).map { ChildKey($0) }.sorted().map(\.string) == keys, sourceLocation: sourceLocation)
}

@Suite("Key ordering")
struct KeyOrderingTests {
    @Test("integer keys sort numerically before strings, shorter first on equal value")
    func integerKeysSortNumericallyBeforeStrings() {
        let keys = ["foo", "bar", "03", "0", "100", "20", "5", "3", "003", "9"].map { ChildKey($0) }
        #expect(keys.sorted().map(\.string) == ["0", "3", "03", "003", "5", "9", "20", "100", "bar", "foo"])
    }

    @Test("int32 bounds decide which keys are integers")
    func int32BoundsDecideIntegerKeys() {
        expectStrictlyAscending([
            "-2147483648", "0", "1", "2", "10", "2147483647",
            "-2147483649", "-2147483650", "-a", "2147483648", "21474836480", "2147483649", "a",
        ])
    }

    @Test(
        "key comparator on pairs of keys",
        arguments: [
            ("1234", "1234", 0), ("1234", "12345", -1), ("4321", "1234", 1), ("1234", "zzzz", -1),
            ("4321", "12a", -1), ("abc", "abcd", -1), ("zzzz", "aaaa", 1), ("-1234", "0", -1),
            ("-1234", "-1234", 0), ("-1234", "-4321", 1), ("-1234", "-", -1), ("-", "1234", 1),
        ] as [(String, String, Int)]
    )
    func keyComparatorPairs(a: String, b: String, expected: Int) {
        #expect(cmp(a, b) == expected)
        #expect(cmp(b, a) == -expected)
        #expect((ChildKey(a) < ChildKey(b)) == (expected < 0))
    }

    @Test(
        "integer key detection",
        arguments: [
            ("0", 0), ("-0", 0), ("00", 0), ("03", 3), ("003", 3), ("0000000000001", 1), ("2147483647", 2147483647),
            ("-2147483648", -2147483648), ("0002147483647", 2147483647), ("-000000000012", -12),
        ] as [(String, Int32)]
    )
    func integerKeys(key: String, value: Int32) {
        let k = ChildKey(key)
        #expect(k.isInteger)
        #expect(k.integerValue == value)
    }

    @Test(
        "string keys that look numeric",
        arguments: [
            "-", "", "2147483648", "-2147483649", "21474836480", "00000000002147483648", "+1", " 1", "1 ", "1.5", "1e3", "１", "0x1", "--1",
            "1-",
        ]
    )
    func nonIntegerKeys(key: String) {
        #expect(!ChildKey(key).isInteger)
        #expect(ChildKey(key).integerValue == nil)
    }

    @Test("path comparison")
    func pathComparison() throws {
        #expect(try path("/") == path(""))
        #expect(try path("/a") == path("/a//"))
        #expect(try path("/a///b/b//") == path("/a/b/b"))
        #expect(try path("///").isRoot)
        #expect(try path("/b") > path("/a"))
        #expect(try path("/ab") > path("/a"))
        #expect(try path("/a/b") > path("/a"))
        #expect(try path("/a/b") > path("/a//"))
        #expect(try path("/a/0971500000") > path("/a/00403311635"))
        #expect(try path("/a/0971500000") > path("/a/971500000"))
        #expect(try !(path("/a") < path("/a//")) && !(path("/a//") < path("/a")))
        #expect(try path("/a//b/").string == "/a/b")
        #expect(try path("").string == "/")
    }

    @Test("path order is segment by segment in key order, a proper prefix first")
    func pathOrderIsSegmentBySegment() throws {
        let ordered = ["1", "2", "10", "a", "a/1", "a/2", "a/10", "a/a", "a/aa", "a/b", "a/b/c", "b", "b/a"]
        let paths = try ordered.map(path)
        for i in paths.indices {
            #expect(!(paths[i] < paths[i]))
            for j in paths.indices where i < j {
                #expect(paths[i] < paths[j], "\(ordered[i]) < \(ordered[j])")
                #expect(!(paths[j] < paths[i]), "not \(ordered[j]) < \(ordered[i])")
            }
        }
        var rng = SeededGenerator(seed: 5)
        #expect(paths.shuffled(using: &rng).sorted() == paths)
    }

    @Test("Hangul keys compare by UTF-16 and never equal")
    func hangulKeysCompareByUTF16() {
        #expect(cmp("유주연", "윤규완오빠") == -1)
        #expect(cmp("윤규완오빠", "유주연") == 1)
    }

    @Test("the documented example list of keys sorts exactly")
    func specExample() {
        let expected = [
            "-2147483648", "-1", "0", "-0", "00", "0000000000001", "3", "03", "003", "5", "9", "10", "20", "100",
            "2147483647", " 1", "+1", "-", "-2147483649", "1.5", "2147483648", "A", "Z", "_", "a", "bar", "foo", "z",
            "~", "１",
        ]
        var rng = SeededGenerator(seed: 42)
        for _ in 0..<20 {
            #expect(expected.shuffled(using: &rng).map { ChildKey($0) }.sorted().map(\.string) == expected)
        }
        expectStrictlyAscending(expected)
    }

    @Test("-0 vs 00 (equal value and length) is broken deterministically by string order")
    func negativeZeroTie() {
        #expect(cmp("-0", "00") == -1)
        #expect(cmp("00", "-0") == 1)
        #expect(cmp("-00", "000") == -1)
        #expect(cmp("000", "-00") == 1)
        #expect(cmp("0", "-0") == -1)
        #expect(cmp("-0", "-0") == 0)
        #expect(ChildKey("-0") != ChildKey("00"))
        // Both survive as distinct keys of a sorted map.
        var map = SortedMap<ChildKey, Int>()
        map.updateValue(1, forKey: "00")
        map.updateValue(2, forKey: "-0")
        #expect(map.count == 2)
        #expect(map.keys.map(\.string) == ["-0", "00"])
    }

    @Test("UTF-16 order: a supplementary-plane character sorts before U+E000…U+FFFF")
    func utf16Order() {
        let grin = "\u{1F600}"
        #expect(cmp(grin, "\u{FF61}") == -1)
        #expect(cmp("\u{FF61}", grin) == 1)
        #expect(cmp(grin, "\u{E000}") == -1)
        #expect(cmp(grin, "\u{FFFF}") == -1)
        #expect(cmp("\u{D7FF}", grin) == -1)
        #expect(cmp("\u{10FFFF}", "\u{E000}") == -1)
        #expect(cmp("a\u{1F600}", "a\u{FF61}") == -1)
        #expect(cmp("a\u{1F600}b", "a\u{1F600}") == 1)
        #expect(cmp("\u{1F600}", "\u{1F601}") == -1)
        #expect(cmp("A", "Z") == -1)
        #expect(cmp("Z", "_") == -1)
        #expect(cmp("_", "a") == -1)
        #expect(cmp("abc", "abcd") == -1)
        #expect(cmp("é", "z") == 1)
        #expect(ChildKey.compareUTF16("\u{1F600}", "\u{FF61}") == -1)
        #expect(ChildKey.compareUTF16("", "") == 0)
        #expect(ChildKey.compareUTF16("", "a") == -1)
    }

    @Test("compareUTF16 matches UTF-16 code unit order on random strings")
    func randomUTF16() {
        var rng = SeededGenerator(seed: 2024)
        let pools: [ClosedRange<UInt32>] = [0x20...0x7E, 0x80...0x7FF, 0x800...0xD7FF, 0xE000...0xFFFF, 0x10000...0x10FFFF]
        func randomString() -> String {
            var s = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...4, using: &rng) {
                let pool = pools.randomElement(using: &rng)!
                // Narrow ranges so that shared prefixes and near misses are common.
                let base = pool.lowerBound + UInt32.random(in: 0...min(3, pool.upperBound - pool.lowerBound), using: &rng)
                let far = UInt32.random(in: pool, using: &rng)
                let value = Bool.random(using: &rng) ? base : far
                s.append(Unicode.Scalar(value)!)
            }
            return String(s)
        }
        for _ in 0..<20_000 {
            let a = randomString()
            let b = randomString()
            #expect(
                ChildKey.compareUTF16(a, b) == ReferenceKeyOrder.utf16(a, b), "\(Array(a.unicodeScalars)) vs \(Array(b.unicodeScalars))")
        }
    }

    @Test("ChildKey.compare matches the reference nameCompare on random keys and is a total order")
    func randomKeys() {
        var rng = SeededGenerator(seed: 99)
        let alphabet = Array("0123456789-0a A~_z\u{FF61}\u{1F600}é+.")
        func randomKey() -> String {
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: return String(Int64.random(in: -3_000_000_000...3_000_000_000, using: &rng))
            case 1: return String(repeating: "0", count: Int.random(in: 0...3, using: &rng)) + String(Int.random(in: 0...30, using: &rng))
            case 2:
                return "-" + String(repeating: "0", count: Int.random(in: 0...2, using: &rng)) + String(Int.random(in: 0...5, using: &rng))
            default: return String((0..<Int.random(in: 1...4, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            }
        }
        let keys = (0..<400).map { _ in randomKey() }
        for a in keys {
            for b in keys {
                #expect(cmp(a, b) == ReferenceKeyOrder.compare(a, b), "\(a) vs \(b)")
            }
        }
        // Sorting gives the same order as the oracle, and equality of order means equality of key.
        let unique = Array(Set(keys))
        let sorted = unique.map { ChildKey($0) }.sorted().map(\.string)
        let oracle = unique.sorted { ReferenceKeyOrder.compare($0, $1) < 0 }
        #expect(sorted == oracle)
        for i in sorted.indices.dropFirst() { #expect(cmp(sorted[i - 1], sorted[i]) == -1) }
    }

    @Test("long keys sharing prefixes (past the first seven bytes) compare as the reference, however they are made")
    func randomLongKeys() throws {
        var rng = SeededGenerator(seed: 7)
        // Few symbols, so keys share long prefixes and differ anywhere, before, at or past byte 7;
        // multi-byte ones straddle that boundary.
        let alphabet = Array("ab0-é\u{FF61}\u{1F600}\u{E000}")
        func randomKey() -> String {
            if Int.random(in: 0..<8, using: &rng) == 0 { return String(Int.random(in: 0...99, using: &rng)) }
            return String((0..<Int.random(in: 1...11, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
        }
        let strings = (0..<300).map { _ in randomKey() }
        // The three ways keys are made: from a string, validated, and split from a path.
        let made: [(String) throws -> ChildKey] = [
            { ChildKey($0) }, { ChildKey(validating: $0)! }, { try path("x/" + $0).keys[1] },
        ]
        for (i, a) in strings.enumerated() {
            for (j, b) in strings.enumerated() {
                let ka = try made[(i + j) % 3](a)
                let kb = try made[(i + 2 * j) % 3](b)
                #expect(
                    sign(ChildKey.compare(ka, kb)) == ReferenceKeyOrder.compare(a, b),
                    "\(Array(a.unicodeScalars)) vs \(Array(b.unicodeScalars))")
                #expect((ka < kb) == (ReferenceKeyOrder.compare(a, b) < 0))
            }
        }
    }

    @Test("DatabasePath keeps segments as keys and answers prefix questions")
    func pathBasics() throws {
        let p = try path("/a/b/c")
        #expect(p.keys.map(\.string) == ["a", "b", "c"])
        #expect(p.count == 3)
        #expect(p.last == "c")
        #expect(p.parent == (try path("a/b")))
        #expect(DatabasePath.root.parent == nil)
        #expect(try path("a").contains(p))
        #expect(p.contains(p))
        #expect(!p.contains(try path("a")))
        #expect(try !path("a/bb").contains(p))
        #expect(p.relative(to: try path("a")).map(Array.init) == ["b", "c"])
        #expect(try path("x").relative(to: p) == nil)
    }
}
