/// CRC-32C (Castagnoli): reflected polynomial 0x82F63B78, initial value and final XOR 0xFFFFFFFF,
/// as used by iSCSI, ext4 and LevelDB. Software slicing-by-8.
///
/// Checksums chain: `checksum(b, seed: checksum(a)) == checksum(a + b)`.
package enum CRC32C {
    /// Eight 256-entry tables, flattened: `tables[k * 256 + b]`.
    static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            t[i] = c
        }
        for i in 0..<256 {
            for k in 1..<8 {
                let prev = t[(k - 1) * 256 + i]
                t[k * 256 + i] = (prev >> 8) ^ t[Int(prev & 0xFF)]
            }
        }
        return t
    }()

    package static func checksum(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        var crc = ~seed
        let n = bytes.count
        guard n > 0, let base = bytes.baseAddress else { return seed }
        Self.tables.withUnsafeBufferPointer { tablesBuffer in
            let t = tablesBuffer.baseAddress.unsafelyUnwrapped
            var i = 0
            while i &+ 8 <= n {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self)) ^ UInt64(crc)
                let lo = UInt32(truncatingIfNeeded: word)
                let hi = UInt32(truncatingIfNeeded: word &>> 32)
                crc =
                    t[7 &* 256 &+ Int(lo & 0xFF)] ^ t[6 &* 256 &+ Int((lo &>> 8) & 0xFF)]
                    ^ t[5 &* 256 &+ Int((lo &>> 16) & 0xFF)] ^ t[4 &* 256 &+ Int(lo &>> 24)]
                    ^ t[3 &* 256 &+ Int(hi & 0xFF)] ^ t[2 &* 256 &+ Int((hi &>> 8) & 0xFF)]
                    ^ t[1 &* 256 &+ Int((hi &>> 16) & 0xFF)] ^ t[Int(hi &>> 24)]
                i &+= 8
            }
            while i < n {
                crc = (crc &>> 8) ^ t[Int((crc ^ UInt32(base.load(fromByteOffset: i, as: UInt8.self))) & 0xFF)]
                i &+= 1
            }
        }
        return ~crc
    }

    package static func checksum(_ bytes: [UInt8], seed: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, seed: seed) }
    }
}
