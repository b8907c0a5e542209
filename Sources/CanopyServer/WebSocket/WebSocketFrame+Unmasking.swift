import NIOCore
import NIOWebSocket

extension WebSocketFrame {
    /// The payload of a client's data frame, unmasked eight bytes at a time: the bytes NIO's
    /// `unmaskedData` gives (`WebSocketUnmaskingTests` compares them), which it unmasks one byte
    /// at a time, a tenth of the server's work on a small write. A frame with extension data
    /// (none is negotiated) is left to NIO.
    var unmaskedPayload: ByteBuffer {
        guard let key = self.maskKey, self.extensionData == nil else { return self.unmaskedData }
        var data = self.data
        let mask32 = UInt32(key[0]) | UInt32(key[1]) << 8 | UInt32(key[2]) << 16 | UInt32(key[3]) << 24
        let mask = UInt64(mask32) | UInt64(mask32) << 32
        data.withUnsafeMutableReadableBytes { bytes in
            let count = bytes.count
            var i = 0
            // Little-endian words: byte j of a word is payload byte i + j, masked by key[j % 4].
            while i + 8 <= count {
                let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                bytes.storeBytes(of: (word ^ mask).littleEndian, toByteOffset: i, as: UInt64.self)
                i += 8
            }
            while i < count {
                bytes[i] ^= key[i & 3]
                i += 1
            }
        }
        return data
    }
}
