import NIOCore
import NIOWebSocket
import Testing

@testable import CanopyServer

/// ``NIOWebSocket/WebSocketFrame/unmaskedPayload`` gives the bytes NIO's `unmaskedData` gives,
/// whatever the length (whole words, a tail, both, none), the key and where the payload sits in
/// its buffer.
@Suite("Unmasking client frames")
struct WebSocketUnmaskingTests {
    @Test("the same bytes as NIO's unmasking")
    func sameAsNIO() {
        var generator = SystemRandomNumberGenerator()
        let lengths = Array(0...41) + [127, 1000, 65_537]
        for length in lengths {
            for offset in [0, 1, 3] {
                let key = WebSocketMaskingKey.random(using: &generator)
                var buffer = ByteBuffer(bytes: (0..<(offset + length)).map { _ in UInt8.random(in: 0...255, using: &generator) })
                buffer.moveReaderIndex(forwardBy: offset)
                let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: key, data: buffer)
                #expect(frame.unmaskedPayload == frame.unmaskedData, "length \(length), offset \(offset)")
                // The frame's own data is left as it was.
                #expect(frame.data == buffer)
            }
        }
        let unmasked = WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: "plain text"))
        #expect(unmasked.unmaskedPayload == ByteBuffer(string: "plain text"))
    }
}
