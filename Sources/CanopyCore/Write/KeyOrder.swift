/// Sorting many keys: by three 64-bit words of each key first (integer comparisons, or a radix
/// sort for large batches), and by ``ChildKey/compare(_:_:)`` only among keys whose words tie.
package enum KeyOrder {
    /// A key's sort words and its position. String keys: 2^63 + bytes `skip…skip+6` in `high`,
    /// bytes `skip+7…skip+14` in `middle`, `skip+15…skip+22` in `low`, where `skip` is the
    /// prefix every string key of the batch shares; each byte mapped so that unsigned order is
    /// UTF-16 order, zero-padded (a key that ends sorts first). Integer keys: their value offset
    /// into 0..<2^32 in `high` (before every string key; ties by length, then string).
    typealias Entry = (high: UInt64, middle: UInt64, low: UInt64, position: UInt32)

    /// From this many keys on, the words are radix sorted.
    static var radixThreshold: Int { 2048 }

    /// The positions of `keys` in increasing key order; equal keys keep their relative order.
    package static func sortedPositions(_ keys: ContiguousArray<ChildKey>) -> [UInt32] {
        precondition(keys.count < Int(UInt32.max), "too many keys")
        // Keys already in strictly increasing order cost one pass.
        let isSorted = keys.withUnsafeBufferPointer { k in
            var i = 1
            while i < k.count && ChildKey.compare(k[i &- 1], k[i]) < 0 { i &+= 1 }
            return i >= k.count
        }
        if isSorted { return (0..<UInt32(truncatingIfNeeded: keys.count)).map { $0 } }
        // Push IDs share their leading timestamp digits, and IDs made in one millisecond differ
        // only in their last bytes: the words start after the shared prefix and reach 23 bytes on.
        let shared = Self.sharedPrefixLength(keys)
        var entries: [Entry] = []
        entries.reserveCapacity(keys.count)
        for (i, key) in keys.enumerated() {
            let (high, middle, low) = Self.words(key, skipping: shared)
            entries.append((high, middle, low, UInt32(truncatingIfNeeded: i)))
        }
        keys.withUnsafeBufferPointer { k in
            let byKey = { (a: Entry, b: Entry) -> Bool in
                if a.high != b.high { return a.high < b.high }
                if a.middle != b.middle { return a.middle < b.middle }
                if a.low != b.low { return a.low < b.low }
                let c = ChildKey.compare(k[Int(a.position)], k[Int(b.position)])
                return c != 0 ? c < 0 : a.position < b.position
            }
            if entries.count < Self.radixThreshold {
                entries.sort(by: byKey)
                return
            }
            // Radix sort by the words (stable, so ties stay in position order), then order the
            // runs of equal words (keys longer than the words) by the full comparison.
            Self.radixSort(&entries)
            var start = 0
            while start < entries.count {
                var end = start &+ 1
                while end < entries.count && entries[end].high == entries[start].high && entries[end].middle == entries[start].middle
                    && entries[end].low == entries[start].low
                {
                    end &+= 1
                }
                if end &- start > 1 { entries[start..<end].sort(by: byKey) }
                start = end
            }
        }
        return entries.map(\.position)
    }

    /// A stable LSD radix sort of `entries` by (`high`, `middle`, `low`), a byte at a time,
    /// skipping the bytes that are the same in every entry.
    ///
    /// - Complexity: O(24 *n*)
    static func radixSort(_ entries: inout [Entry]) {
        let n = entries.count
        // Byte `d` of the 192-bit word, least significant first: `low`, then `middle`, `high`.
        @inline(__always) func byte(_ e: Entry, _ d: Int) -> Int {
            let word = d < 8 ? e.low : (d < 16 ? e.middle : e.high)
            return Int(truncatingIfNeeded: (word &>> UInt64(8 &* (d & 7))) & 0xFF)
        }
        var counts = [Int](repeating: 0, count: 24 * 256)
        counts.withUnsafeMutableBufferPointer { counts in
            for e in entries {
                for d in 0..<24 { counts[d &* 256 &+ byte(e, d)] &+= 1 }
            }
        }
        var buffer = entries
        var offsets = [Int](repeating: 0, count: 256)
        for d in 0..<24 {
            let histogram = counts[(d * 256)..<(d * 256 + 256)]
            if histogram.contains(n) { continue }  // every entry has the same byte here
            var sum = 0
            for b in 0..<256 {
                offsets[b] = sum
                sum &+= histogram[d * 256 + b]
            }
            entries.withUnsafeBufferPointer { source in
                buffer.withUnsafeMutableBufferPointer { target in
                    offsets.withUnsafeMutableBufferPointer { offsets in
                        for e in source {
                            let b = byte(e, d)
                            target[offsets[b]] = e
                            offsets[b] &+= 1
                        }
                    }
                }
            }
            swap(&entries, &buffer)
        }
    }

    /// The length, in bytes, of the prefix every non-integer key shares.
    static func sharedPrefixLength(_ keys: ContiguousArray<ChildKey>) -> Int {
        var first: String? = nil
        var length = Int.max
        for key in keys where !key.isInteger {
            guard let f = first else {
                first = key.string
                length = key.string.utf8.count
                continue
            }
            if length == 0 { return 0 }
            length = Swift.min(length, Self.commonPrefix(f, key.string, limit: length))
        }
        return first == nil ? 0 : length
    }

    private static func commonPrefix(_ a: String, _ b: String, limit: Int) -> Int {
        let fast = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in
                let n = Swift.min(limit, x.count, y.count)
                var i = 0
                while i < n && x[i] == y[i] { i &+= 1 }
                return i
            }
        }
        if let fast, let fast { return fast }
        return zip(a.utf8, b.utf8).prefix(limit).prefix { $0 == $1 }.count
    }

    /// The sort words of `key` (see ``Entry``).
    static func words(_ key: ChildKey, skipping skip: Int) -> (UInt64, UInt64, UInt64) {
        if key.isInteger { return (UInt64(bitPattern: key.integer &+ (1 << 31)), 0, 0) }
        if let words = key.string.utf8.withContiguousStorageIfAvailable({ Self.words($0, skipping: skip) }) { return words }
        return Array(key.string.utf8).withUnsafeBufferPointer { Self.words($0, skipping: skip) }
    }

    static func words(_ bytes: UnsafeBufferPointer<UInt8>, skipping skip: Int) -> (UInt64, UInt64, UInt64) {
        let start = Swift.min(skip, bytes.count)
        return ((1 << 63) | Self.chunk(bytes, start, 7), Self.chunk(bytes, start &+ 7, 8), Self.chunk(bytes, start &+ 15, 8))
    }

    /// Bytes `offset..<offset+width` (`width` ≤ 8) as a big-endian number of `width` bytes, mapped
    /// by ``utf16Rank(_:)`` and zero-padded past the end.
    @inline(__always)
    static func chunk(_ bytes: UnsafeBufferPointer<UInt8>, _ offset: Int, _ width: Int) -> UInt64 {
        // With 8 bytes at hand ending at the chunk's end and none ≥ 0x80 (whose rank may differ
        // from the byte): one load.
        let end = offset &+ width
        if end <= bytes.count && end >= 8 {
            let raw = UInt64(
                bigEndian: UnsafeRawPointer(bytes.baseAddress.unsafelyUnwrapped).loadUnaligned(fromByteOffset: end &- 8, as: UInt64.self))
            let word = width == 8 ? raw : raw & ((1 << UInt64(8 &* width)) &- 1)
            if word & 0x8080_8080_8080_8080 == 0 { return word }
        }
        var word: UInt64 = 0
        var i = offset
        while i < end {
            word = word &<< 8 | (i < bytes.count ? UInt64(Self.utf16Rank(bytes[i])) : 0)
            i &+= 1
        }
        return word
    }

    /// A byte's rank such that comparing ranks at the first differing byte of two UTF-8 strings
    /// gives their UTF-16 order (see ``ChildKey/compareDifferingBytes(_:_:)``): the 3-byte leads
    /// EE and EF move above the 4-byte leads F0…FF.
    @inline(__always)
    static func utf16Rank(_ b: UInt8) -> UInt8 {
        if b < 0xEE { return b }
        return b >= 0xF0 ? b &- 2 : b &+ 0x10
    }
}
