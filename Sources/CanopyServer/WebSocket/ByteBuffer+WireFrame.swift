import NIOCore

/// The header of a server's WebSocket frame (RFC 6455, section 5.2), written by the outbox in
/// front of each message so that many messages go out as one buffer, below NIO's frame encoder.
///
/// A server's frame is never masked and the SDKs' messages are unfragmented text, so the header
/// is the final-fragment bit with the text opcode, then the payload length in 7, 16 or 64 bits.
/// `WebSocketFrameHeaderTests` holds it to NIO's `WebSocketFrameEncoder`, byte for byte, and
/// reads it back with NIO's decoder.
extension ByteBuffer {
    /// The most bytes ``writeWireTextFrameHeader(length:)`` writes.
    static let wireFrameHeaderLimit = 10

    /// Writes the header of an unmasked, final text frame whose payload is `length` bytes.
    @discardableResult
    mutating func writeWireTextFrameHeader(length: Int) -> Int {
        let first: UInt8 = 0x80 | 0x1
        switch length {
        case ..<126:
            return self.writeMultipleIntegers(first, UInt8(length))
        case ...Int(UInt16.max):
            return self.writeMultipleIntegers(first, UInt8(126), UInt16(length))
        default:
            return self.writeMultipleIntegers(first, UInt8(127), UInt64(length))
        }
    }

    /// Writes one unmasked, final text frame carrying `payload`.
    mutating func writeWireTextFrame(_ payload: some Collection<UInt8>) {
        self.writeWireTextFrameHeader(length: payload.count)
        self.writeBytes(payload)
    }
}
