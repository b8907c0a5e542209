/// Key and path-segment rules (see *Ordering and Keys*, "Keys and paths").
package enum KeyValidation {
    /// A key: non-empty, none of `. # $ / [ ]`, no ASCII control character.
    @inlinable
    package static func isValidKey(_ key: String) -> Bool {
        guard !key.isEmpty else { return false }
        if let valid = key.utf8.withContiguousStorageIfAvailable({ !containsInvalidKeyByte($0) }) {
            return valid
        }
        return !key.utf8.contains { isInvalidKeyByte($0) }
    }

    /// Whether `bytes` contain a byte that ``isInvalidKeyByte(_:)``, 8 bytes at a time.
    @inlinable
    package static func containsInvalidKeyByte(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = bytes.count
        var i = 0
        if n >= 8 {
            let base = UnsafeRawPointer(bytes.baseAddress.unsafelyUnwrapped)
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            // Bit 7 of a byte of the result is set for some zero byte of `x` (exact as "any").
            @inline(__always) func zeroBytes(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
            while i &+ 8 <= n {
                let w = base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                // A control byte (< 0x20) has its top 3 bits clear.
                var hits = zeroBytes((w &>> 5) & (ones &* 0x07))
                hits |= zeroBytes(w ^ (ones &* 0x23)) | zeroBytes(w ^ (ones &* 0x24))
                hits |= zeroBytes((w | ones) ^ (ones &* 0x2F))  // `.` 0x2E and `/` 0x2F
                hits |= zeroBytes(w ^ (ones &* 0x5B)) | zeroBytes(w ^ (ones &* 0x5D)) | zeroBytes(w ^ (ones &* 0x7F))
                if hits != 0 { return true }
                i &+= 8
            }
        }
        while i < n {
            if isInvalidKeyByte(bytes[i]) { return true }
            i &+= 1
        }
        return false
    }

    /// `. # $ / [ ]`, U+0000–U+001F and U+007F, by byte (UTF-8 bytes of other scalars are ≥ 0x80).
    @inlinable @inline(__always)
    package static func isInvalidKeyByte(_ b: UInt8) -> Bool {
        // Bit `b` of the mask, for bytes below 0x80: 0x00–0x1F, `#` 0x23, `$` 0x24, `.` 0x2E,
        // `/` 0x2F, `[` 0x5B, `]` 0x5D, DEL 0x7F.
        if b < 0x40 { return (0x0000_C018_FFFF_FFFF as UInt64) &>> UInt64(b) & 1 != 0 }
        if b < 0x80 { return (0x8000_0000_2800_0000 as UInt64) &>> UInt64(b &- 0x40) & 1 != 0 }
        return false
    }

    /// A path segment (after splitting on `/`): the same rules as a key.
    package static func isValidPathSegment(_ segment: String) -> Bool { isValidKey(segment) }

    /// The largest path, in UTF-8 bytes with a leading `/` and separators, that a write may produce.
    package static let maxPathBytes = 768
    /// The deepest path, in segments, that a write may produce.
    package static let maxDepth = 32
    /// The largest string leaf, in UTF-8 bytes.
    package static let maxStringBytes = 10_485_760
}
