/// One segment of a database path: a child's key, with Firebase key order as its `Comparable`.
///
/// Keys that parse as 32-bit signed integers (leading zeros allowed, `"-0"` included) sort first,
/// numerically, and on equal value the shorter string first (`"3" < "03" < "003"`); every other key
/// sorts after them by UTF-16 code units. The integer value and the first bytes of other keys are
/// computed once, at creation, so most comparisons are one integer comparison.
package struct ChildKey: Sendable {
    /// The key as written.
    package let string: String
    /// The key's sort word: for an integer key its value offset into 0..<2^32; for any other key
    /// 2^63 plus its first 7 UTF-8 bytes, each ranked by ``KeyOrder/utf16Rank(_:)``, big-endian,
    /// zero-padded. Different words order their keys; equal words leave a tie to break.
    @usableFromInline let order: UInt64
    /// ``order``, for matching against keys known in advance (rule paths): equal keys have equal
    /// words, so a different word rules a key out without reading its string.
    @inlinable package var sortWord: UInt64 { self.order }

    @usableFromInline static let notInteger = Int64.min
    /// Where string keys' words start (every integer key's word is below).
    @usableFromInline static var stringOrder: UInt64 { 1 << 63 }

    /// The 32-bit value for integer keys, ``notInteger`` otherwise.
    @inlinable
    var integer: Int64 {
        self.order < ChildKey.stringOrder ? Int64(bitPattern: self.order) &- (1 << 31) : ChildKey.notInteger
    }

    package init(_ string: String) {
        var copy = string
        self.init(string: string, order: copy.withUTF8 { ChildKey.order(bytes: $0, integer: ChildKey.parseInteger(bytes: $0)) })
    }

    /// The key for `string` when it is a valid key (``KeyValidation/isValidKey(_:)``), else `nil`:
    /// validation and integer parsing in one pass over the bytes.
    @inlinable
    package init?(validating string: String) {
        guard
            let order = string.utf8.withContiguousStorageIfAvailable({ ChildKey.validatedOrder($0) })
                ?? ChildKey.validatedOrder(string)
        else { return nil }
        self.init(string: string, order: order)
    }

    /// A key whose sort word (``order``) is already known.
    @usableFromInline
    init(string: String, order: UInt64) {
        self.string = string
        self.order = order
    }

    /// An array index key (`"0"`, `"1"`, …).
    package init(index: Int) {
        if index >= 0 && index <= Int(Int32.max) {
            self.init(string: String(index), order: UInt64(index) &+ (1 << 31))
        } else {
            self.init(String(index))
        }
    }

    /// The sort word of the key with UTF-8 `bytes` and integer value `integer` (`nil` when it is not
    /// an integer key).
    @usableFromInline
    static func order(bytes: UnsafeBufferPointer<UInt8>, integer: Int64?) -> UInt64 {
        if let integer { return UInt64(bitPattern: integer &+ (1 << 31)) }
        let n = bytes.count
        if n >= 8 {
            // The first 8 bytes in one load; below 0x80 a byte is its own rank.
            let word = UInt64(bigEndian: UnsafeRawPointer(bytes.baseAddress.unsafelyUnwrapped).loadUnaligned(as: UInt64.self))
            if word & 0x8080_8080_8080_8080 == 0 { return ChildKey.stringOrder | word &>> 8 }
        }
        // Only the bytes there are, then the zero padding in one shift.
        let m = Swift.min(n, 7)
        var word: UInt64 = 0
        var i = 0
        while i < m {
            word = word &<< 8 | UInt64(KeyOrder.utf16Rank(bytes[i]))
            i &+= 1
        }
        return ChildKey.stringOrder | word &<< UInt64(8 &* (7 &- m))
    }

    /// `nil` for an invalid key, else its sort word (``order``).
    @usableFromInline
    static func validatedOrder(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64? {
        guard let integer = validatedInteger(bytes) else { return nil }
        return order(bytes: bytes, integer: integer == notInteger ? nil : integer)
    }

    @usableFromInline
    static func validatedOrder(_ string: String) -> UInt64? {
        guard KeyValidation.isValidKey(string) else { return nil }
        var copy = string
        return copy.withUTF8 { order(bytes: $0, integer: parseInteger(bytes: $0)) }
    }

    /// `nil` for an invalid key, else the integer value or ``notInteger``.
    @usableFromInline
    static func validatedInteger(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        if bytes.isEmpty || KeyValidation.containsInvalidKeyByte(bytes) { return nil }
        return parseInteger(bytes: bytes) ?? notInteger
    }

    /// Whether the key is `.priority` (its sort word first).
    @inlinable
    package var isPriorityKey: Bool { self.order == ChildKey.priorityOrder && self.string == ".priority" }

    /// The sort word of `.priority` (its first 7 bytes, `.priori`).
    @usableFromInline static var priorityOrder: UInt64 { ChildKey.stringOrder | 0x2E70_7269_6F72_69 }

    /// Whether the key is an integer key: an optional `-`, any leading zeros, at most 10
    /// significant digits, and a value in the Int32 range (see *Ordering and Keys*).
    package var isInteger: Bool { self.integer != ChildKey.notInteger }

    /// The integer value of an integer key.
    package var integerValue: Int32? { self.isInteger ? Int32(truncatingIfNeeded: self.integer) : nil }

    /// Parses `^-?(0*)\d{1,10}$` within the Int32 range, as the JS SDK's `tryParseInt` does.
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
    /// The same UTF-8 bytes (as Firebase, which compares code units: canonically equivalent but
    /// different strings are different keys, as ``compare(_:_:)`` orders them). Equal keys have
    /// equal sort words, so different words settle most unequal pairs at once.
    @inlinable
    package static func == (lhs: ChildKey, rhs: ChildKey) -> Bool {
        lhs.order == rhs.order && (sameRepresentation(lhs.string, rhs.string) || compareUTF16(lhs.string, rhs.string) == 0)
    }
    package func hash(into hasher: inout Hasher) { hasher.combine(self.string) }
}

extension ChildKey: Comparable {
    @inlinable
    package static func < (lhs: ChildKey, rhs: ChildKey) -> Bool { ChildKey.compare(lhs, rhs) < 0 }

    /// Three-way key comparison: integer keys first by value (the shorter first on a tie), then the
    /// other keys by UTF-16 code units; the `"-0"`/`"00"` tie is broken by string order.
    ///
    /// Different sort words (``order``) decide at once: integer keys by value and before every
    /// other key, other keys by their first 7 bytes (a zero-padded word orders a key that ends
    /// before one that goes on, and ranked bytes order as UTF-16 at the first difference). Equal
    /// words compare the whole strings.
    ///
    /// - Complexity: O(1) for different words, else O(length)
    @inlinable
    package static func compare(_ a: ChildKey, _ b: ChildKey) -> Int {
        if a.order != b.order { return a.order < b.order ? -1 : 1 }
        if a.order < ChildKey.stringOrder {
            let la = a.string.utf8.count
            let lb = b.string.utf8.count
            if la != lb { return la < lb ? -1 : 1 }
        }
        // A tie is most often the key searched for: the same string (one storage, or equal small
        // strings) is found without reading its bytes.
        if sameRepresentation(a.string, b.string) { return 0 }
        return compareUTF16(a.string, b.string)
    }

    /// Whether two strings are the same value bit for bit (one storage object, or equal small
    /// strings): then certainly the same bytes. Different bits may still be the same bytes.
    @inlinable @inline(__always)
    static func sameRepresentation(_ a: String, _ b: String) -> Bool {
        // A String is two words on 64-bit platforms; elsewhere, no shortcut.
        guard MemoryLayout<String>.size == 16 else { return false }
        let x = unsafeBitCast(a, to: (UInt64, UInt64).self)
        let y = unsafeBitCast(b, to: (UInt64, UInt64).self)
        return x.0 == y.0 && x.1 == y.1
    }

    /// ``compare(_:_:)`` without the sort words: integer keys first by value (the shorter first
    /// on a tie), then the other keys by UTF-16 code units (the general path, for tests).
    package static func compareWithoutOrder(_ a: ChildKey, _ b: ChildKey) -> Int {
        let ai = a.integer != ChildKey.notInteger
        let bi = b.integer != ChildKey.notInteger
        if ai && bi {
            if a.integer != b.integer { return a.integer < b.integer ? -1 : 1 }
            let la = a.string.utf8.count
            let lb = b.string.utf8.count
            if la != lb { return la < lb ? -1 : 1 }
            return compareUTF16(a.string, b.string)
        }
        if ai { return -1 }
        if bi { return 1 }
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
