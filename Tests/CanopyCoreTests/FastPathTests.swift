import CanopyCore
import CanopyTestSupport
import Testing

/// The fast write path must agree with the exact one: key validation and parsing, key sorting
/// (including the radix sort for large batches), node building and conversion.
@Suite("Fast write path agrees with the exact path")
struct FastPathTests {
    private static let alphabet = Array("0123456789-_aAzZ~ .#$/[]é\u{FF61}\u{1F600}\u{0}\u{1F}\u{7F}")

    private func randomKey(_ rng: inout SeededGenerator) -> String {
        switch Int.random(in: 0..<5, using: &rng) {
        case 0: return String(Int64.random(in: -3_000_000_000...3_000_000_000, using: &rng))
        case 1: return String(repeating: "0", count: Int.random(in: 0...3, using: &rng)) + String(Int.random(in: 0...40, using: &rng))
        case 2:
            // Push-ID-like: a shared prefix, differences near the end.
            return "-Nq8xY"
                + String((0..<Int.random(in: 8...16, using: &rng)).map { _ in Self.alphabet[Int.random(in: 0..<16, using: &rng)] })
        default: return String((0..<Int.random(in: 0...24, using: &rng)).map { _ in Self.alphabet.randomElement(using: &rng)! })
        }
    }

    @Test("ChildKey(validating:) is isValidKey plus ChildKey(_:), and the 8-byte check matches the byte check")
    func validating() {
        var rng = SeededGenerator(seed: 31)
        for _ in 0..<20_000 {
            let s = self.randomKey(&rng)
            let key = ChildKey(validating: s)
            #expect((key != nil) == KeyValidation.isValidKey(s), "\(Array(s.utf8))")
            #expect((key != nil) == (!s.isEmpty && !s.utf8.contains { KeyValidation.isInvalidKeyByte($0) }))
            if let key {
                #expect(key.string == s)
                #expect(key.isInteger == ChildKey(s).isInteger && key.integerValue == ChildKey(s).integerValue)
            }
        }
        #expect(ChildKey(index: 12).integerValue == 12 && ChildKey(index: 0) == ChildKey("0"))
        #expect(ChildKey(".priority").isPriorityKey && !ChildKey(".priorit").isPriorityKey && !ChildKey("x.priority").isPriorityKey)
    }

    @Test("sortedPositions orders like ChildKey.compare, stably, for small and radix-sorted batches", arguments: [10, 300, 5000])
    func sortedPositions(count: Int) {
        var rng = SeededGenerator(seed: UInt64(count))
        var strings = (0..<count).map { _ in self.randomKey(&rng) }
        // Duplicates keep their relative order.
        for _ in 0..<(count / 10) { strings.append(strings[Int.random(in: 0..<strings.count, using: &rng)]) }
        let keys = ContiguousArray(strings.map { ChildKey($0) })
        let order = KeyOrder.sortedPositions(keys).map(Int.init)
        let expected = Array(keys.indices).sorted { a, b in
            let c = ChildKey.compare(keys[a], keys[b])
            return c != 0 ? c < 0 : a < b
        }
        #expect(order == expected)
        // Already sorted input comes back as is.
        let sorted = ContiguousArray(Set(strings).map { ChildKey($0) }.sorted())
        #expect(KeyOrder.sortedPositions(sorted).map(Int.init) == Array(sorted.indices))
    }

    @Test("push IDs of one millisecond that differ only in the last byte sort exactly")
    func pushIDTies() {
        var keys = ContiguousArray<ChildKey>()
        let digits = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")
        for ms in 0..<300 {
            for n in 0..<12 {
                // A short shared prefix (the timestamp crossed a boundary), so the words tie.
                let stamp = (ms < 150 ? "-Nq8" : "-Nq9") + String(digits[ms % 64]) + String(digits[(ms / 64) % 64]) + "zz"
                keys.append(ChildKey(stamp + "abcdefghijk" + String(digits[n])))
            }
        }
        var rng = SeededGenerator(seed: 9)
        keys.shuffle(using: &rng)
        let order = KeyOrder.sortedPositions(keys).map { keys[Int($0)].string }
        #expect(order == keys.sorted().map(\.string))
    }

    @Test("the fast converter builds the exact converter's node, or defers to it")
    func fastEqualsExact() throws {
        var rng = SeededGenerator(seed: 77)
        func value(_ depth: Int) -> JSONValue {
            switch Int.random(in: 0..<(depth > 3 ? 6 : 9), using: &rng) {
            case 0: return .null
            case 1: return .bool(Bool.random(using: &rng))
            case 2: return .int(Int64.random(in: -5...5, using: &rng))
            case 3: return .double([1.5, -0.0, .nan, .infinity][Int.random(in: 0..<4, using: &rng)])
            case 4, 5: return .string(self.randomKey(&rng))
            case 6: return .array((0..<Int.random(in: 0...4, using: &rng)).map { _ in value(depth + 1) })
            default:
                var members: [String: JSONValue] = [:]
                for _ in 0..<Int.random(in: 0...14, using: &rng) { members[self.randomKey(&rng)] = value(depth + 1) }
                if Int.random(in: 0..<10, using: &rng) == 0 { members[".priority"] = 1 }
                if Int.random(in: 0..<20, using: &rng) == 0 { members = [".sv": "timestamp"] }
                return .object(members)
            }
        }
        var fastCount = 0
        for _ in 0..<3000 {
            let json = value(0)
            let location: [ChildKey] = Int.random(in: 0..<4, using: &rng) == 0 ? (0..<31).map { ChildKey("l\($0)") } : [ChildKey("loc")]
            var fast = FastValueConverter(budget: PathBudget(location: location))
            let exact: Result<WriteValue, DatabaseError> = Result { () throws(DatabaseError) in
                var converter = try ValueConverter(function: "set", location: location.map(\.string))
                return try converter.convert(json)
            }
            let viaEntry = Result { () throws(DatabaseError) in try ValueConverter.writeValue(json, at: location, function: "set") }
            switch (exact, viaEntry) {
            case (.success(let a), .success(let b)): #expect(a.node == b.node && a.placeholders.count == b.placeholders.count)
            case (.failure(let a), .failure(let b)): #expect(a.message == b.message && a.code == b.code)
            default: Issue.record("writeValue and the exact converter disagree on \(json)")
            }
            if let node = try? fast.node(json) {
                fastCount += 1
                guard case .success(let expected) = exact else {
                    Issue.record("the fast path accepted what the exact path rejects: \(json)")
                    continue
                }
                #expect(expected.placeholders.isEmpty)
                #expect(node == expected.node)
                #expect(node.childMap.checkInvariants())
            }
        }
        #expect(fastCount > 1000)
    }

    @Test("SortedMap built from contiguous arrays and grown by appends keeps its invariants")
    func appendsAndBuild() {
        for n in [1, 31, 32, 33, 64, 65, 1000] {
            let keys = ContiguousArray((0..<n).map { ChildKey("k\(String(1_000_000 + $0))") })
            var map = SortedMap(sortedKeys: keys, values: ContiguousArray(0..<n))
            #expect(map.checkInvariants() && map.count == n)
            for i in n..<(n + 200) { map.updateValue(i, forKey: ChildKey("k\(String(1_000_000 + i))")) }
            #expect(map.checkInvariants() && map.count == n + 200)
            #expect(map.keys.map(\.string) == (0..<(n + 200)).map { "k\(String(1_000_000 + $0))" })
            map.updateValue(-1, forKey: "a")
            map.updateValue(-2, forKey: "k1000000")
            #expect(map.checkInvariants() && map.count == n + 201 && map["k1000000"] == -2)
        }
    }
}
