import CanopyCore
import CanopyTestSupport
import Testing

/// A brute-force sorted map: an array kept sorted by key.
private struct Oracle {
    var elements: [(key: ChildKey, value: Int)] = []

    func lowerBound(_ key: ChildKey) -> Int {
        var low = 0
        var high = self.elements.count
        while low < high {
            let mid = (low + high) / 2
            if self.elements[mid].key < key { low = mid + 1 } else { high = mid }
        }
        return low
    }

    func index(of key: ChildKey) -> Int? {
        let i = self.lowerBound(key)
        return i < self.elements.count && self.elements[i].key == key ? i : nil
    }

    @discardableResult
    mutating func update(_ value: Int, _ key: ChildKey) -> Int? {
        if let i = self.index(of: key) {
            let old = self.elements[i].value
            self.elements[i].value = value
            return old
        }
        self.elements.insert((key, value), at: self.lowerBound(key))
        return nil
    }

    @discardableResult
    mutating func remove(_ key: ChildKey) -> Int? {
        guard let i = self.index(of: key) else { return nil }
        return self.elements.remove(at: i).value
    }
}

private func same(_ a: (key: ChildKey, value: Int)?, _ b: (key: ChildKey, value: Int)?) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case (let x?, let y?): return x.key == y.key && x.value == y.value
    default: return false
    }
}

/// The elements as two parallel arrays, which compare cheaply.
private struct Pairs: Equatable, CustomStringConvertible {
    var keys: [ChildKey] = []
    var values: [Int] = []
    var description: String {
        zip(self.keys, self.values).prefix(20).map { "\($0.0)=\($0.1)" }.joined(separator: ", ") + (self.keys.count > 20 ? ", …" : "")
    }
}

private func pairs<S: Sequence>(_ s: S) -> Pairs where S.Element == (key: ChildKey, value: Int) {
    var result = Pairs()
    for (key, value) in s {
        result.keys.append(key)
        result.values.append(value)
    }
    return result
}

/// Compares every query of `map` with the oracle. `probes` are extra (possibly absent) keys.
/// With `full`, every rank is checked; otherwise about 200 evenly spread ones.
private func verify(
    _ map: SortedMap<ChildKey, Int>, _ oracle: Oracle, probes: [ChildKey], full: Bool = true,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let expected = oracle.elements
    #expect(map.checkInvariants(), sourceLocation: sourceLocation)
    #expect(map.count == expected.count, sourceLocation: sourceLocation)
    #expect(map.isEmpty == expected.isEmpty, sourceLocation: sourceLocation)
    #expect(pairs(map) == pairs(expected), sourceLocation: sourceLocation)
    #expect(pairs(map.reversedElements()) == pairs(expected.reversed()), sourceLocation: sourceLocation)
    #expect(map.keys == expected.map(\.key), sourceLocation: sourceLocation)
    // `forEachElement(while:)` visits the same elements in the same order, and stops where told.
    var visited: [(key: ChildKey, value: Int)] = []
    let finished = map.forEachElement { key, value in
        visited.append((key, value))
        return true
    }
    #expect(finished && pairs(visited) == pairs(expected), sourceLocation: sourceLocation)
    if !expected.isEmpty {
        let stop = expected.count / 2
        var count = 0
        let stopped = !map.forEachElement { _, _ in
            count += 1
            return count <= stop
        }
        #expect(stopped && count == stop + 1, "forEachElement stopped after \(count) of \(expected.count)", sourceLocation: sourceLocation)
    }
    #expect(same(map.first, expected.first), sourceLocation: sourceLocation)
    #expect(same(map.last, expected.last), sourceLocation: sourceLocation)
    var mismatches = 0
    let step = full ? 1 : max(1, expected.count / 200)
    for rank in stride(from: 0, to: expected.count, by: step) {
        let element = expected[rank]
        if !same(map.element(atRank: rank), element) { mismatches += 1 }
        if map.rank(of: element.key) != rank { mismatches += 1 }
        if map[element.key] != element.value || !map.contains(element.key) { mismatches += 1 }
        if map.lowerBoundRank(element.key) != rank || map.upperBoundRank(element.key) != rank + 1 { mismatches += 1 }
        if !same(map.predecessor(of: element.key), rank > 0 ? expected[rank - 1] : nil) { mismatches += 1 }
        if !same(map.successor(of: element.key), rank + 1 < expected.count ? expected[rank + 1] : nil) { mismatches += 1 }
    }
    #expect(mismatches == 0, "rank/lookup mismatches", sourceLocation: sourceLocation)
    for probe in probes {
        let lb = oracle.lowerBound(probe)
        let present = oracle.index(of: probe) != nil
        #expect(map.lowerBoundRank(probe) == lb, "lowerBoundRank(\(probe))", sourceLocation: sourceLocation)
        #expect(map.upperBoundRank(probe) == lb + (present ? 1 : 0), sourceLocation: sourceLocation)
        #expect(map.rank(of: probe) == (present ? lb : nil), sourceLocation: sourceLocation)
        #expect(map.contains(probe) == present, sourceLocation: sourceLocation)
        #expect(same(map.predecessor(of: probe), lb > 0 ? expected[lb - 1] : nil), "predecessor(\(probe))", sourceLocation: sourceLocation)
        let after = lb + (present ? 1 : 0)
        #expect(
            same(map.successor(of: probe), after < expected.count ? expected[after] : nil), "successor(\(probe))",
            sourceLocation: sourceLocation)
    }
    let ranks =
        expected.isEmpty ? [0] : [0, 1, expected.count / 3, expected.count / 2, expected.count - 1, expected.count, expected.count + 5]
    for r in ranks {
        #expect(
            pairs(map.elements(fromRank: r)) == pairs(expected.dropFirst(r)), "elements(fromRank: \(r))", sourceLocation: sourceLocation)
        let down = r < expected.count ? Array(expected[...r].reversed()) : []
        #expect(pairs(map.reversedElements(fromRank: r)) == pairs(down), "reversedElements(fromRank: \(r))", sourceLocation: sourceLocation)
    }
}

/// Keys of several shapes: integers (with leading zeros and signs), push-ID-like, short strings.
private func randomKey(_ rng: inout SeededGenerator) -> ChildKey {
    switch Int.random(in: 0..<6, using: &rng) {
    case 0: return ChildKey(String(Int.random(in: 0..<3000, using: &rng)))
    case 1: return ChildKey(String(Int.random(in: -500..<500, using: &rng)))
    case 2: return ChildKey("0" + String(Int.random(in: 0..<300, using: &rng)))
    case 3:
        let time = Int64(1_700_000_000_000) + Int64.random(in: 0..<2000, using: &rng)
        let random = (0..<12).map { _ in UInt8.random(in: 0..<64, using: &rng) }
        return ChildKey(PushIDGenerator.format(time: time, random: random))
    case 4:
        let alphabet = Array("abcXYZ_~-é\u{1F600}\u{FF61}")
        return ChildKey(String((0..<Int.random(in: 1...3, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }))
    default: return ChildKey("user" + String(Int.random(in: 0..<2000, using: &rng)))
    }
}

@Suite("SortedMap")
struct SortedMapTests {
    @Test("randomized inserts, removals and updates match a brute-force sorted array", arguments: [1, 2, 3] as [UInt64])
    func randomized(seed: UInt64) async throws {
        try await onComputeThreads { self.randomizedScenario(seed: seed) }
    }

    func randomizedScenario(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        var map = SortedMap<ChildKey, Int>()
        var oracle = Oracle()
        var snapshots: [(SortedMap<ChildKey, Int>, [(key: ChildKey, value: Int)])] = []
        // Phases: grow (3 levels of tree), shrink to nearly empty, mixed, grow again.
        let phases: [(steps: Int, insertShare: Int)] = [(3500, 85), (3500, 10), (2000, 50), (1500, 80)]
        var step = 0
        for phase in phases {
            for _ in 0..<phase.steps {
                step += 1
                let roll = Int.random(in: 0..<100, using: &rng)
                let key: ChildKey
                if roll >= phase.insertShare, !oracle.elements.isEmpty, Bool.random(using: &rng) {
                    key = oracle.elements.randomElement(using: &rng)!.key  // an existing key
                } else {
                    key = randomKey(&rng)
                }
                let value = Int.random(in: 0..<1_000_000, using: &rng)
                if roll < phase.insertShare {
                    #expect(map.updateValue(value, forKey: key) == oracle.update(value, key))
                } else if roll < phase.insertShare + (100 - phase.insertShare) * 2 / 3 {
                    #expect(map.removeValue(forKey: key) == oracle.remove(key))
                } else {
                    let result = map.modifyValue(forKey: key) { (v: inout Int) -> Int in
                        let old = v
                        v = value
                        return old
                    }
                    var expected: Int? = nil
                    if let i = oracle.index(of: key) {
                        expected = oracle.elements[i].value
                        oracle.elements[i].value = value
                    }
                    #expect(result == expected)
                }
                if step % 250 == 0 {
                    verify(map, oracle, probes: (0..<20).map { _ in randomKey(&rng) }, full: false)
                }
                if step % 1000 == 0 { snapshots.append((map, oracle.elements)) }
            }
            verify(map, oracle, probes: (0..<50).map { _ in randomKey(&rng) })
        }
        // Copies taken earlier still hold exactly what they held then.
        #expect(snapshots.count >= 10)
        for (copy, elements) in snapshots {
            #expect(copy.checkInvariants())
            #expect(copy.count == elements.count)
            #expect(pairs(copy) == pairs(elements))
        }
        // Drain completely.
        for (key, _) in oracle.elements.shuffled(using: &rng) {
            #expect(map.removeValue(forKey: key) != nil)
        }
        #expect(map.isEmpty)
        #expect(map.count == 0)
        #expect(map.checkInvariants())
        #expect(map.first == nil && map.last == nil)
        #expect(map.removeValue(forKey: "x") == nil)
    }

    @Test("a copy does not see later updates, removals or in-place modifications")
    func snapshotSemantics() {
        var map = SortedMap<ChildKey, Int>()
        for i in 0..<2000 { map.updateValue(i, forKey: ChildKey(String(i))) }
        let copy = map
        #expect(map.isIdentical(to: copy))

        var a = map
        a.updateValue(-1, forKey: "5")
        a.updateValue(-2, forKey: "new")
        var b = map
        b.removeValue(forKey: "1000")
        for i in stride(from: 0, to: 2000, by: 3) { b.removeValue(forKey: ChildKey(String(i))) }
        var c = map
        #expect(c.modifyValue(forKey: "1999") { $0 = 42 } != nil)
        #expect(c.modifyValue(forKey: "missing") { $0 = 42 } == nil)

        #expect(!a.isIdentical(to: map) && !b.isIdentical(to: map) && !c.isIdentical(to: map))
        for m in [map, copy] {
            #expect(m.count == 2000)
            #expect(m.checkInvariants())
            #expect(m["5"] == 5 && m["1000"] == 1000 && m["1999"] == 1999 && m["new"] == nil)
            #expect(pairs(m) == Pairs(keys: (0..<2000).map { ChildKey(String($0)) }, values: Array(0..<2000)))
        }
        #expect(a["5"] == -1 && a["new"] == -2 && a.count == 2001 && a.checkInvariants())
        #expect(b["1000"] == nil && b["3"] == nil && b["4"] == 4 && b.count == 2000 - 667 - 1 && b.checkInvariants())
        #expect(c["1999"] == 42 && c.count == 2000 && c.checkInvariants())

        // Mutating a uniquely referenced map works in place and leaves former copies alone.
        var d = a
        d.updateValue(7, forKey: "5")
        #expect(a["5"] == -1 && d["5"] == 7)
    }

    @Test("bulk init from sorted keys, sizes 0…200", arguments: Array(0...200))
    func bulkSmall(size: Int) {
        let keys = (0..<size).map { ChildKey(String($0)) }
        let values = Array(0..<size)
        var map = SortedMap(sortedKeys: keys, values: values)
        var oracle = Oracle(elements: Array(zip(keys, values)).map { (key: $0.0, value: $0.1) })
        verify(map, oracle, probes: ["-1", "a", ChildKey(String(size)), "05"])
        // Still a valid tree after mutations at both ends and in the middle.
        for key in ["-5", "zz", ChildKey(String(size / 2))] as [ChildKey] {
            #expect(map.updateValue(1, forKey: key) == oracle.update(1, key))
        }
        for key in ["0", ChildKey(String(max(0, size - 1))), "-5"] as [ChildKey] {
            #expect(map.removeValue(forKey: key) == oracle.remove(key))
        }
        verify(map, oracle, probes: [])
    }

    @Test("bulk init of 100 000 elements with string keys")
    func bulkLarge() {
        let size = 100_000
        let keys = (0..<size).map { ChildKey("k" + String(1_000_000 + $0)) }
        let values = Array(0..<size)
        var map = SortedMap(sortedKeys: keys, values: values)
        #expect(map.count == size)
        #expect(map.checkInvariants())
        var mismatches = 0
        for r in stride(from: 0, to: size, by: 7) {
            let e = map.element(atRank: r)
            if e.key != keys[r] || e.value != r || map.rank(of: keys[r]) != r { mismatches += 1 }
        }
        #expect(mismatches == 0)
        #expect(Array(map.map(\.value)) == values)
        #expect(map.reversedElements().map(\.value) == values.reversed())
        #expect(map.elements(fromRank: size - 3).map(\.value) == [size - 3, size - 2, size - 1])
        #expect(map.first?.value == 0 && map.last?.value == size - 1)
        #expect(map.predecessor(of: "k1050000.5")?.value == 50_000)
        #expect(map.successor(of: "k1050000")?.value == 50_001)
        // Remove every other element, then check again.
        for i in stride(from: 0, to: size, by: 2) { map.removeValue(forKey: keys[i]) }
        #expect(map.count == size / 2)
        #expect(map.checkInvariants())
        #expect(map.element(atRank: 0).value == 1)
        #expect(map.rank(of: keys[99_999]) == size / 2 - 1)
        #expect(map.rank(of: keys[50_000]) == nil)
    }

    @Test("ascending and descending insertion orders keep the tree valid")
    func monotoneInsertion() {
        var up = SortedMap<ChildKey, Int>()
        var down = SortedMap<ChildKey, Int>()
        for i in 0..<5000 {
            up.updateValue(i, forKey: ChildKey(String(i)))
            down.updateValue(i, forKey: ChildKey(String(4999 - i)))
        }
        #expect(up.checkInvariants() && down.checkInvariants())
        #expect(up.keys == down.keys)
        #expect(up.keys == (0..<5000).map { ChildKey(String($0)) })
        #expect(up.element(atRank: 1234).key == "1234")
        #expect(down.element(atRank: 1234).value == 4999 - 1234)
        // Remove from the front, as queues of push IDs do.
        for i in 0..<4990 { up.removeValue(forKey: ChildKey(String(i))) }
        #expect(up.checkInvariants())
        #expect(up.keys.map(\.string) == (4990..<5000).map(String.init))
    }
}
