import CanopyStorage
import Testing

@Suite("Storage primitives")
struct PrimitiveCodingTests {
    @Test("CRC32C known vectors")
    func crcVectors() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([]) == 0)
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum(Array(0..<32)) == 0x46DD_794E)
    }

    @Test("CRC32C chains across any split")
    func crcChaining() {
        let bytes = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let whole = CRC32C.checksum(bytes)
        for split in [0, 1, 7, 8, 9, 64, 150, 299, 300] {
            let first = CRC32C.checksum(Array(bytes[..<split]))
            #expect(CRC32C.checksum(Array(bytes[split...]), seed: first) == whole, "split at \(split)")
        }
        let raw = bytes.withUnsafeBytes { CRC32C.checksum($0) }
        #expect(raw == whole)
    }

    @Test("varints, zigzag and fixed integers round-trip")
    func integers() throws {
        let unsigned: [UInt64] = [0, 1, 127, 128, 255, 300, 16383, 16384, 1 << 32, .max - 1, .max]
        let signed: [Int64] = [0, -1, 1, -64, 63, 64, -65, .min, .max, .min + 1]
        var w = ByteWriter()
        for v in unsigned { w.appendVarint(v) }
        for v in signed { w.appendZigzag(v) }
        w.appendU32(0xDEAD_BEEF)
        w.appendU64(0x0102_0304_0506_0708)
        w.appendString("héllo\0😀")
        #expect(Array(w.bytes[0..<4]) == [0, 1, 127, 0x80])  // 128 starts 0x80 0x01
        try w.bytes.withUnsafeBytes { raw throws in
            var r = ByteReader(raw)
            for v in unsigned { #expect(try r.readVarint() == v) }
            for v in signed { #expect(try r.readZigzag() == v) }
            #expect(try r.readU32() == 0xDEAD_BEEF)
            #expect(try r.readU64() == 0x0102_0304_0506_0708)
            #expect(try r.readString() == "héllo\0😀")
            #expect(r.isAtEnd)
            #expect(throws: CodecError.self) { try r.readU8() }
        }
    }

    @Test("malformed varints and strings are errors with offsets")
    func malformed() {
        func fails(_ bytes: [UInt8], at offset: Int, _ read: (inout ByteReader) throws(CodecError) -> Void) {
            bytes.withUnsafeBytes { raw in
                var r = ByteReader(raw)
                do throws(CodecError) {
                    try read(&r)
                    Issue.record("expected an error for \(bytes)")
                } catch {
                    #expect(error.offset == offset, "\(bytes): \(error)")
                }
            }
        }
        fails([0x80], at: 0) { r throws(CodecError) in _ = try r.readVarint() }
        fails([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02], at: 0) { r throws(CodecError) in _ = try r.readVarint() }
        fails([0x80, 0x00], at: 0) { r throws(CodecError) in _ = try r.readVarint() }
        fails([0x05, 0x61], at: 1) { r throws(CodecError) in _ = try r.readString() }
        fails([0x02, 0xC3, 0x28], at: 1) { r throws(CodecError) in _ = try r.readString() }
        fails([0x01, 0xFF], at: 1) { r throws(CodecError) in _ = try r.readString() }
        fails([1, 2, 3], at: 0) { r throws(CodecError) in _ = try r.readU32() }
        fails([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], at: 0) { r throws(CodecError) in _ = try r.readString() }
    }
}
