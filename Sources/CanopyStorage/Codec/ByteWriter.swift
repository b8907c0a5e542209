/// An append-only byte buffer with the primitives of the storage formats: little-endian fixed
/// integers, LEB128 varints, zigzag signed varints and length-prefixed strings.
package struct ByteWriter: Sendable {
    package var bytes: [UInt8]

    package init(capacity: Int = 0) {
        self.bytes = []
        if capacity > 0 { self.bytes.reserveCapacity(capacity) }
    }

    package var count: Int { self.bytes.count }

    @inline(__always)
    package mutating func append(_ byte: UInt8) { self.bytes.append(byte) }

    package mutating func appendU32(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { self.bytes.append(contentsOf: $0) }
    }

    package mutating func appendU64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { self.bytes.append(contentsOf: $0) }
    }

    /// Unsigned LEB128: 7 bits a byte, low bits first, high bit set on all but the last byte.
    @inline(__always)
    package mutating func appendVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            self.bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v &>>= 7
        }
        self.bytes.append(UInt8(truncatingIfNeeded: v))
    }

    @inline(__always)
    package mutating func appendVarint(_ value: Int) { self.appendVarint(UInt64(value)) }

    /// A signed integer as the varint of its zigzag form (0, -1, 1, -2, … → 0, 1, 2, 3, …).
    @inline(__always)
    package mutating func appendZigzag(_ value: Int64) {
        self.appendVarint(UInt64(bitPattern: (value &<< 1) ^ (value &>> 63)))
    }

    package mutating func append(contentsOf raw: UnsafeRawBufferPointer) { self.bytes.append(contentsOf: raw) }

    package mutating func append(contentsOf bytes: some Sequence<UInt8>) { self.bytes.append(contentsOf: bytes) }

    /// The UTF-8 bytes of `string`, without a length.
    @inline(__always)
    package mutating func appendUTF8(_ string: String) {
        if string.utf8.withContiguousStorageIfAvailable({ self.bytes.append(contentsOf: $0) }) == nil {
            self.bytes.append(contentsOf: string.utf8)
        }
    }

    /// A varint byte length, then the UTF-8 bytes.
    package mutating func appendString(_ string: String) {
        self.appendVarint(string.utf8.count)
        self.appendUTF8(string)
    }
}
