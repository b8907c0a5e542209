/// A cursor over borrowed bytes whose reads are all bounds-checked and throw ``CodecError``
/// (with the offset of the failed read) instead of trapping.
///
/// The reader does not own its buffer: the buffer must outlive it.
package struct ByteReader {
    package let buffer: UnsafeRawBufferPointer
    package var offset: Int

    package init(_ buffer: UnsafeRawBufferPointer) {
        self.buffer = buffer
        self.offset = 0
    }

    package var remaining: Int { self.buffer.count &- self.offset }
    package var isAtEnd: Bool { self.offset >= self.buffer.count }

    package func error(_ reason: String, at offset: Int? = nil) -> CodecError {
        CodecError(offset: offset ?? self.offset, reason: reason)
    }

    @inline(__always)
    package mutating func readU8() throws(CodecError) -> UInt8 {
        guard self.offset < self.buffer.count else { throw self.error("unexpected end of data") }
        let b = self.buffer[self.offset]
        self.offset &+= 1
        return b
    }

    package mutating func readU32() throws(CodecError) -> UInt32 {
        guard self.remaining >= 4 else { throw self.error("unexpected end of data (need 4 bytes)") }
        let v = self.buffer.loadUnaligned(fromByteOffset: self.offset, as: UInt32.self)
        self.offset &+= 4
        return UInt32(littleEndian: v)
    }

    package mutating func readU64() throws(CodecError) -> UInt64 {
        guard self.remaining >= 8 else { throw self.error("unexpected end of data (need 8 bytes)") }
        let v = self.buffer.loadUnaligned(fromByteOffset: self.offset, as: UInt64.self)
        self.offset &+= 8
        return UInt64(littleEndian: v)
    }

    /// An unsigned LEB128 varint of at most 10 bytes, in canonical form only (no redundant bytes).
    @inline(__always)
    package mutating func readVarint() throws(CodecError) -> UInt64 {
        // Fast path: one byte.
        if self.offset < self.buffer.count {
            let b = self.buffer[self.offset]
            if b < 0x80 {
                self.offset &+= 1
                return UInt64(b)
            }
        }
        return try self.readVarintSlow()
    }

    @inline(never)
    mutating func readVarintSlow() throws(CodecError) -> UInt64 {
        let start = self.offset
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard self.offset < self.buffer.count else { throw self.error("unexpected end of data in a varint", at: start) }
            let b = self.buffer[self.offset]
            self.offset &+= 1
            if shift == 63 && b > 1 { throw self.error("varint overflows 64 bits", at: start) }
            result |= UInt64(b & 0x7F) &<< shift
            if b < 0x80 {
                if b == 0 && shift > 0 { throw self.error("non-canonical varint", at: start) }
                return result
            }
            shift &+= 7
        }
    }

    /// A varint that is a count or length: at most `Int.max`.
    @inline(__always)
    package mutating func readLength() throws(CodecError) -> Int {
        let start = self.offset
        let v = try self.readVarint()
        guard v <= UInt64(Int.max) else { throw self.error("length \(v) is too large", at: start) }
        return Int(v)
    }

    /// A zigzag-encoded signed varint.
    @inline(__always)
    package mutating func readZigzag() throws(CodecError) -> Int64 {
        let v = try self.readVarint()
        return Int64(bitPattern: (v &>> 1) ^ (0 &- (v & 1)))
    }

    /// The next `count` bytes, without copying.
    @inline(__always)
    package mutating func readBytes(_ count: Int) throws(CodecError) -> UnsafeRawBufferPointer {
        guard count >= 0, count <= self.remaining else { throw self.error("length \(count) exceeds the \(self.remaining) remaining bytes") }
        let slice = UnsafeRawBufferPointer(rebasing: self.buffer[self.offset..<(self.offset &+ count)])
        self.offset &+= count
        return slice
    }

    /// `count` bytes of valid UTF-8 as a string.
    @inline(__always)
    package mutating func readUTF8(_ count: Int) throws(CodecError) -> String {
        let start = self.offset
        let raw = try self.readBytes(count)
        guard let s = makeString(raw.assumingMemoryBound(to: UInt8.self)) else {
            throw self.error("invalid UTF-8 in a string", at: start)
        }
        return s
    }

    /// A varint byte length, then that many bytes of valid UTF-8.
    package mutating func readString() throws(CodecError) -> String {
        try self.readUTF8(try self.readLength())
    }
}

extension UnsafeRawBufferPointer {
    @inline(__always)
    func assumingMemoryBound(to: UInt8.Type) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: self.baseAddress?.assumingMemoryBound(to: UInt8.self), count: self.count)
    }
}

/// The string of `bytes` when they are valid UTF-8, else `nil`: ASCII (the common case) checked
/// 8 bytes at a time, anything else by the standard library's validation.
@inline(__always)
func makeString(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
    let n = bytes.count
    guard n > 0, let base = bytes.baseAddress else { return "" }
    var i = 0
    var high: UInt64 = 0
    let raw = UnsafeRawPointer(base)
    while i &+ 8 <= n {
        high |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
        i &+= 8
    }
    while i < n {
        high |= UInt64(base[i])
        i &+= 1
    }
    if high & 0x8080_8080_8080_8080 == 0 { return String(decoding: bytes, as: UTF8.self) }
    return String(validating: bytes, as: UTF8.self)
}
