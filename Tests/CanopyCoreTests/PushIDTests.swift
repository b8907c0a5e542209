import CanopyCore
import Dispatch
import Foundation
import Synchronization
import Testing

private let alphabet = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")

/// The 12 random digits (0…63) of a push ID.
private func randomDigits(_ id: String) -> [Int] {
    Array(id).suffix(12).map { alphabet.firstIndex(of: $0)! }
}

/// `digits + 1` as a 12-digit base-64 number (wrapping, as the generator does).
private func incremented(_ digits: [Int]) -> [Int] {
    var d = digits
    var i = d.count - 1
    while i >= 0 && d[i] == 63 {
        d[i] = 0
        i -= 1
    }
    if i >= 0 { d[i] += 1 }
    return d
}

private func isWellFormed(_ id: String) -> Bool {
    id.count == 20 && id.allSatisfy { alphabet.contains($0) }
}

private func bound(_ s: String) -> KeyBound { .key(s) }

private func nowMilliseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

@Suite("Push IDs")
struct PushIDTests {
    @Test("successor and predecessor over the push alphabet")
    func successorAndPredecessorOverPushAlphabet() {
        #expect(KeyNeighbours.predecessor("-") == bound("2147483647"))
        #expect(KeyNeighbours.predecessor("-2147483648") == .min)
        #expect(KeyNeighbours.predecessor("abc") == bound("abb" + String(repeating: "z", count: 783)))
        #expect(KeyNeighbours.predecessor("abc-") == bound("abc"))
        #expect(KeyNeighbours.successor("2147483647") == bound("-"))
        #expect(KeyNeighbours.successor(String(repeating: "z", count: 786)) == .max)
        #expect(KeyNeighbours.successor("abc") == bound("abc-"))
        #expect(KeyNeighbours.successor("abc" + String(repeating: "z", count: 783)) == bound("abd"))
        #expect(KeyNeighbours.successor("abc-") == bound("abc--"))
        // Integer keys step numerically.
        #expect(KeyNeighbours.successor("5") == bound("6"))
        #expect(KeyNeighbours.predecessor("5") == bound("4"))
        #expect(KeyNeighbours.predecessor("0") == bound("-1"))
        #expect(KeyNeighbours.successor("-1") == bound("0"))
        #expect(KeyNeighbours.successor("-2147483648") == bound("-2147483647"))
    }

    @Test("predecessor(k) < k < successor(k) for every single push character and some longer keys")
    func neighboursBracket() {
        let keys = alphabet.map { String($0) } + ["abc", "abc-", "-NjEtLV-a9fEroNWIYfR", "zz", "A0", "100", "-7", "2147483647"]
        for key in keys {
            let k = ChildKey(key)
            switch KeyNeighbours.predecessor(key) {
            case .key(let p): #expect(ChildKey(p) < k, "predecessor(\(key)) = \(p)")
            case .min: Issue.record("predecessor(\(key)) is MIN")
            case .max: Issue.record("predecessor(\(key)) is MAX")
            }
            switch KeyNeighbours.successor(key) {
            case .key(let s): #expect(k < ChildKey(s), "successor(\(key)) = \(s)")
            case .min: Issue.record("successor(\(key)) is MIN")
            case .max: Issue.record("successor(\(key)) is MAX")
            }
        }
    }

    @Test(
        "the timestamp prefix is the milliseconds in the push alphabet, big-endian",
        arguments: [
            (0, "--------"), (1, "-------0"), (63, "-------z"), (64, "------0-"), (1_356_721_306_842, "-IjXt2nP"),
            (1_700_000_000_000, "-NjEtLV-"),
        ] as [(Int64, String)]
    )
    func timestampPrefixes(time: Int64, prefix: String) {
        let id = PushIDGenerator.format(time: time, random: [UInt8](repeating: 0, count: 12))
        #expect(id == prefix + "------------")
        let top = PushIDGenerator.format(time: time, random: [UInt8](repeating: 63, count: 12))
        #expect(top == prefix + "zzzzzzzzzzzz")
        #expect(PushIDGenerator().next(now: time).hasPrefix(prefix))
    }

    @Test("format maps random digits through the alphabet")
    func formatDigits() {
        let id = PushIDGenerator.format(time: 1_700_000_000_000, random: [0, 1, 10, 11, 36, 37, 38, 63, 2, 3, 4, 5])
        #expect(id == "-NjEtLV-" + "-09AZ_az1234")
        #expect(isWellFormed(id))
    }

    @Test("IDs in the same millisecond share the prefix and count up by one, with carries")
    func sameMillisecond() {
        let generator = PushIDGenerator()
        let time: Int64 = 1_700_000_000_000
        var previous = generator.next(now: time)
        var carries = 0
        for _ in 0..<300 {
            let id = generator.next(now: time)
            #expect(id.hasPrefix("-NjEtLV-"))
            #expect(isWellFormed(id))
            #expect(id > previous)
            #expect(ChildKey(previous) < ChildKey(id))
            let before = randomDigits(previous)
            let after = randomDigits(id)
            if before.allSatisfy({ $0 == 63 }) { continue }  // the unspecified wrap-around
            #expect(after == incremented(before), "\(previous) → \(id)")
            if before.last == 63 { carries += 1 }
            previous = id
        }
        // 300 increments wrap the last digit at least four times.
        #expect(carries >= 4)
    }

    @Test("a new millisecond draws a new random part; a clock going back keeps the last time")
    func timeSteps() {
        let generator = PushIDGenerator()
        var ids: [String] = []
        for t in [1_000, 1_000, 1_001, 1_001, 999, 1_002] as [Int64] { ids.append(generator.next(now: t)) }
        #expect(ids == ids.sorted())
        #expect(Set(ids).count == ids.count)
        #expect(ids[0].prefix(8) == ids[1].prefix(8))
        #expect(ids[2].prefix(8) != ids[1].prefix(8))
        #expect(ids[4].prefix(8) == ids[3].prefix(8), "a clock stepping back reuses the last time")
        #expect(randomDigits(ids[4]) == incremented(randomDigits(ids[3])))
        #expect(ids[5].prefix(8) == PushIDGenerator.format(time: 1_002, random: [UInt8](repeating: 0, count: 12)).prefix(8))
        // Fresh random parts differ from one millisecond to the next (72 random bits).
        let a = generator.next(now: 5_000)
        let b = generator.next(now: 5_001)
        let c = generator.next(now: 5_002)
        #expect(Set([a.suffix(12), b.suffix(12), c.suffix(12)]).count == 3)
    }

    @Test("strictly increasing on each of 4 threads × 10 000 and unique overall", arguments: [true, false])
    func concurrent(fixedClock: Bool) {
        let generator = PushIDGenerator()
        let results = Mutex<[[String]]>([])
        let fixed: Int64 = 1_700_000_000_000
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            var ids: [String] = []
            ids.reserveCapacity(10_000)
            for _ in 0..<10_000 { ids.append(generator.next(now: fixedClock ? fixed : nowMilliseconds())) }
            results.withLock { $0.append(ids) }
        }
        let perThread = results.withLock { $0 }
        #expect(perThread.count == 4)
        var all = Set<String>()
        var latest = ""
        for ids in perThread {
            #expect(ids.count == 10_000)
            var decreasing = 0
            var malformed = 0
            for (a, b) in zip(ids, ids.dropFirst()) where !(a < b) || !(ChildKey(a) < ChildKey(b)) { decreasing += 1 }
            for id in ids where !isWellFormed(id) || ChildKey(id).isInteger { malformed += 1 }
            #expect(decreasing == 0)
            #expect(malformed == 0)
            all.formUnion(ids)
            latest = max(latest, ids.last ?? "")
        }
        #expect(all.count == 40_000)
        // The next ID is later than every earlier one.
        #expect(generator.next(now: fixedClock ? fixed : nowMilliseconds()) > latest)
        if fixedClock {
            #expect(all.allSatisfy { $0.hasPrefix("-NjEtLV-") })
        }
    }

    @Test("the shared generator produces well-formed, increasing IDs for the current time")
    func shared() {
        let now = nowMilliseconds()
        let a = PushIDGenerator.shared.next(now: now)
        let b = PushIDGenerator.shared.next(now: now)
        #expect(isWellFormed(a) && isWellFormed(b))
        #expect(a < b)
        #expect(a.hasPrefix("-"))
        #expect(a.prefix(8) >= PushIDGenerator.format(time: now, random: [UInt8](repeating: 0, count: 12)).prefix(8))
    }
}
