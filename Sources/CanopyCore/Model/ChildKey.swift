/// One segment of a database path: a child's key, with Firebase key order as its `Comparable`.
///
/// Keys that parse as 32-bit signed integers (leading zeros allowed, `"-0"` included) sort first,
/// numerically, and on equal value the shorter string first (`"3" < "03" < "003"`); every other key
/// sorts after them by UTF-16 code units. The integer value is computed once, at creation, so
/// comparisons never re-parse.
package struct ChildKey: Sendable {
    /// The key as written.
    package let string: String
    /// The 32-bit value for integer keys. For other keys a value below `Int32.min`: `Int64.min`
    /// with the key's UTF-8 length (8 for any longer than 7) in bits 59…56 and its first seven
    /// bytes (zero-padded, the first in bits 55…48) below, so two keys whose first seven bytes
    /// differ, or that are both that short, compare without reading their strings.
    @usableFromInline let integer: Int64

    /// What ``validatedInteger(_:)-(UnsafeBufferPointer<UInt8>)`` returns for a valid key that is
    /// not an integer key.
    @usableFromInline static let notInteger = Int64.min

    package init(_ string: String) {
        self.init(string: string, integer: ChildKey.parseInteger(string) ?? ChildKey.notInteger)
    }

    /// The key for `string` when it is a valid key (``KeyValidation/isValidKey(_:)``), else `nil`:
    /// validation and integer parsing in one pass over the bytes.
    @inlinable
    package init?(validating string: String) {
        guard
            let integer = string.utf8.withContiguousStorageIfAvailable({ ChildKey.validatedInteger($0) })
                ?? ChildKey.validatedInteger(string)
        else { return nil }
        self.init(string: string, integer: integer)
    }

    /// A key whose integer value (or ``notInteger``) is already known.
    @usableFromInline
    init(string: String, integer: Int64) {
        self.string = string
        self.integer = integer >= Int64(Int32.min) ? integer : ChildKey.prefixWord(string)
    }

    /// An array index key (`"0"`, `"1"`, …).
    package init(index: Int) {
        self.init(string: String(index), integer: index <= Int(Int32.max) ? Int64(index) : ChildKey.notInteger)
    }

    /// ``integer`` for a key that is not an integer key: `Int64.min`, its UTF-8 length up to 8 in
    /// bits 59…56, and its first seven bytes, zero-padded, the first in bits 55…48.
    @usableFromInline
    static func prefixWord(_ string: String) -> Int64 {
        var word: UInt64 = 0
        var n: UInt64 = 0
        for byte in string.utf8 {
            if n == 7 {
                n = 8
                break
            }
            word |= UInt64(byte) &<< (48 &- 8 &* n)
            n &+= 1
        }
        return Int64(bitPattern: word | (n &<< 56) | (1 &<< 63))
    }

    /// `nil` for an invalid key, else the integer value or ``notInteger``.
    @usableFromInline
    static func validatedInteger(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        if bytes.isEmpty || KeyValidation.containsInvalidKeyByte(bytes) { return nil }
        return parseInteger(bytes: bytes) ?? notInteger
    }

    @usableFromInline
    static func validatedInteger(_ string: String) -> Int64? {
        guard KeyValidation.isValidKey(string) else { return nil }
        return parseInteger(string) ?? notInteger
    }

    /// Whether the key is `.priority` (a cheap length test first).
    @inlinable
    package var isPriorityKey: Bool { self.string.utf8.count == 9 && self.string == ".priority" }

    /// Whether the key is an integer key: an optional `-`, any leading zeros, at most 10
    /// significant digits, and a value in the Int32 range (see *Ordering and Keys*).
    package var isInteger: Bool { self.integer >= Int64(Int32.min) }

    /// The integer value of an integer key.
    package var integerValue: Int32? { self.isInteger ? Int32(truncatingIfNeeded: self.integer) : nil }

    /// Parses `^-?(0*)\d{1,10}$` within the Int32 range, as the JS SDK's `tryParseInt` does.
    static func parseInteger(_ s: String) -> Int64? {
        var s = s
        return s.withUTF8 { parseInteger(bytes: $0) }
    }

    @usableFromInline
    static func parseInteger(bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var i = 0
        let n = bytes.count
        if n == 0 { return nil }
        let c0 = bytes[0]
        if c0 != UInt8(ascii: "-") && (c0 < 48 || c0 > 57) { return nil }
        var negative = false
        if bytes[0] == UInt8(ascii: "-") {
            negative = true
            i = 1
            if n == 1 { return nil }
        }
        // Skip leading zeros, then at most 10 significant digits.
        var value: Int64 = 0
        var significant = 0
        var sawDigit = false
        var leading = true
        while i < n {
            let c = bytes[i]
            guard c >= 48 && c <= 57 else { return nil }
            sawDigit = true
            if leading && c == 48 {
                i += 1
                continue
            }
            leading = false
            significant += 1
            if significant > 10 { return nil }
            value = value * 10 + Int64(c - 48)
            i += 1
        }
        guard sawDigit else { return nil }
        if negative { value = -value }
        guard value >= Int64(Int32.min) && value <= Int64(Int32.max) else { return nil }
        return value
    }
}

extension ChildKey: Hashable {
    package static func == (lhs: ChildKey, rhs: ChildKey) -> Bool { lhs.string == rhs.string }
    package func hash(into hasher: inout Hasher) { hasher.combine(self.string) }
}

extension ChildKey: Comparable {
    @inlinable
    package static func < (lhs: ChildKey, rhs: ChildKey) -> Bool { ChildKey.compare(lhs, rhs) < 0 }

    /// Three-way key comparison: integer keys first by value (the shorter first on a tie), then the
    /// other keys by UTF-16 code units; the `"-0"`/`"00"` tie is broken by string order.
    @inlinable
    package static func compare(_ a: ChildKey, _ b: ChildKey) -> Int {
        let ai = a.integer >= Int64(Int32.min)
        let bi = b.integer >= Int64(Int32.min)
        if ai && bi {
            if a.integer != b.integer { return a.integer < b.integer ? -1 : 1 }
            let la = a.string.utf8.count
            let lb = b.string.utf8.count
            if la != lb { return la < lb ? -1 : 1 }
            return compareUTF16(a.string, b.string)
        }
        if ai { return -1 }
        if bi { return 1 }
        let x = UInt64(bitPattern: a.integer) &<< 8
        let y = UInt64(bitPattern: b.integer) &<< 8
        if x != y {
            // The first seven bytes differ: the first differing one decides (a zero of padding is
            // below any byte, so a key that ends there, a prefix of the other, sorts first).
            let shift = UInt64(truncatingIfNeeded: (x ^ y).leadingZeroBitCount & ~7)
            return compareDifferingBytes(UInt8(truncatingIfNeeded: (x &<< shift) &>> 56), UInt8(truncatingIfNeeded: (y &<< shift) &>> 56))
        }
        // The same first seven bytes; both keys that short: the shorter (the rest of the longer
        // being zeros) first.
        let la = (a.integer &>> 56) & 0xF
        let lb = (b.integer &>> 56) & 0xF
        if la < 8 && lb < 8 { return la == lb ? 0 : (la < lb ? -1 : 1) }
        return compareUTF16(a.string, b.string)
    }

    /// Compares two strings by UTF-16 code units (JavaScript's `<`).
    @inlinable
    package static func compareUTF16(_ a: String, _ b: String) -> Int {
        // Native strings expose their UTF-8 bytes directly; others are copied once.
        if let result = a.utf8.withContiguousStorageIfAvailable({ x in b.utf8.withContiguousStorageIfAvailable { y in compareUTF16(x, y) } }
        ),
            let result
        {
            return result
        }
        return Array(a.utf8).withUnsafeBufferPointer { x in Array(b.utf8).withUnsafeBufferPointer { y in compareUTF16(x, y) } }
    }

    /// UTF-8 byte order is code-point order, which is UTF-16 order except that supplementary-plane
    /// characters (4 UTF-8 bytes, surrogate pairs in UTF-16) sort before U+E000…U+FFFF.
    /// Compares 8 bytes at a time.
    @inlinable
    package static func compareUTF16(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Int {
        let n = Swift.min(x.count, y.count)
        var i = 0
        if n >= 8 {
            let px = UnsafeRawPointer(x.baseAddress.unsafelyUnwrapped)
            let py = UnsafeRawPointer(y.baseAddress.unsafelyUnwrapped)
            while i &+ 8 <= n {
                let a = UInt64(bigEndian: px.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                let b = UInt64(bigEndian: py.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                if a != b {
                    let shift = UInt64(truncatingIfNeeded: (a ^ b).leadingZeroBitCount & ~7)
                    return compareDifferingBytes(
                        UInt8(truncatingIfNeeded: (a &<< shift) &>> 56), UInt8(truncatingIfNeeded: (b &<< shift) &>> 56))
                }
                i &+= 8
            }
        }
        while i < n {
            let ca = x[i]
            let cb = y[i]
            if ca != cb { return compareDifferingBytes(ca, cb) }
            i &+= 1
        }
        return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
    }

    /// The order of two strings at their first differing byte. Both strings are then at the same
    /// byte of scalars with equal leading bytes so far, so comparing these bytes compares code
    /// points, except that a 4-byte lead (F0…F4) sorts before the 3-byte leads EE and EF.
    @inlinable @inline(__always)
    static func compareDifferingBytes(_ ca: UInt8, _ cb: UInt8) -> Int {
        if ca >= 0xEE && cb >= 0xEE && (ca >= 0xF0) != (cb >= 0xF0) { return ca >= 0xF0 ? -1 : 1 }
        return ca < cb ? -1 : 1
    }
}

extension ChildKey: CustomStringConvertible {
    package var description: String { self.string }
}

extension ChildKey: ExpressibleByStringLiteral {
    package init(stringLiteral value: String) { self.init(value) }
}
