import Canopy
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small deterministic generator (SplitMix64).
struct BenchRNG {
    var state: UInt64

    init(seed: UInt64) { self.state = seed }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(self.state)
    }

    mutating func next(below upper: Int) -> Int { Int(self.next() % UInt64(upper)) }

    /// The SplitMix64 finalizer: a stateless hash of `x`, so values can be recomputed from an index.
    static func mix(_ x: UInt64) -> UInt64 {
        var z = x
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` distinct indices in `0..<upper`, ascending.
    mutating func sampleIndices(_ count: Int, below upper: Int) -> [Int] {
        var picked = Set<Int>()
        while picked.count < min(count, upper) { picked.insert(self.next(below: upper)) }
        return picked.sorted()
    }
}

/// `prefix` followed by `value` in `digits` zero-padded decimal digits (a small string up to 15 bytes).
func paddedKey(_ prefix: UInt8, _ value: Int, digits: Int) -> String {
    String(unsafeUninitializedCapacity: digits + 1) { buffer in
        buffer[0] = prefix
        var v = value
        for i in stride(from: digits, through: 1, by: -1) {
            buffer[i] = UInt8(ascii: "0") &+ UInt8(v % 10)
            v /= 10
        }
        return digits + 1
    }
}
