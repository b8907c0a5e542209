import CanopyWire
import NIOCore

/// A long application message (an answer or a listen's initial value) written as the SDKs' split
/// frames a piece at a time, as the client takes them: the count frame, then pieces of at most
/// ``WireFrameSplitter/frameLimit`` UTF-16 code units (more for a message so long that the count
/// would pass ``WireFrameAssembler/maxFrames``: clients limit the count, not the pieces), each a
/// whole text frame that never ends inside a character.
///
/// It holds the message's one rendering (shared with the other connections it goes to) and a
/// position in it; the frames are written into the buffers it is given, so no second copy of the
/// message exists at any time.
struct SplitMessage {
    private let rendering: Rendering
    private var text: [UInt8] { self.rendering.bytes }
    /// The most UTF-16 code units in one piece.
    private let pieceLimit: Int
    /// The pieces that follow the count frame.
    let count: Int
    /// The count frame went out.
    private var countWritten = false
    /// Where the next piece starts.
    private var position = 0

    /// - Parameters:
    ///   - rendering: The message's UTF-8 text (longer than one frame).
    ///   - pieceLimit: The most UTF-16 code units in a piece, unless that makes too many.
    ///   - maxPieces: The most pieces.
    init(_ rendering: Rendering, pieceLimit: Int = WireFrameSplitter.frameLimit, maxPieces: Int = WireFrameAssembler.maxFrames) {
        self.rendering = rendering
        let text = rendering.bytes
        var limit = pieceLimit
        var count = Self.pieces(of: text, limit: limit)
        while count > maxPieces {
            limit = limit * (count / maxPieces + 1)
            count = Self.pieces(of: text, limit: limit)
        }
        self.pieceLimit = limit
        self.count = count
    }

    /// The bytes of the message's text.
    var byteCount: Int { self.text.count }

    /// Everything was written.
    var isFinished: Bool { self.countWritten && self.position == self.text.count }

    /// Writes whole frames, the count frame first, until about `budget` bytes were written or the
    /// message ends (at least one frame).
    mutating func writeFrames(into buffer: inout ByteBuffer, budget: Int) {
        let start = buffer.writerIndex
        if !self.countWritten {
            buffer.writeWireTextFrame(String(self.count).utf8)
            self.countWritten = true
        }
        while self.position < self.text.count && buffer.writerIndex - start < budget {
            let end = Self.pieceEnd(in: self.text, from: self.position, limit: self.pieceLimit)
            self.text.withUnsafeBufferPointer { bytes in
                buffer.writeWireTextFrame(UnsafeBufferPointer(rebasing: bytes[self.position..<end]))
            }
            self.position = end
        }
    }

    /// The number of pieces of at most `limit` UTF-16 code units.
    static func pieces(of text: [UInt8], limit: Int) -> Int {
        var count = 0
        var position = 0
        while position < text.count {
            position = self.pieceEnd(in: text, from: position, limit: limit)
            count += 1
        }
        return count
    }

    /// Where the piece starting at `start` ends: after as many whole characters as fit in `limit`
    /// UTF-16 code units (a character of four UTF-8 bytes takes two).
    static func pieceEnd(in text: [UInt8], from start: Int, limit: Int) -> Int {
        text.withUnsafeBufferPointer { bytes in
            var units = 0
            var index = start
            while index < bytes.count {
                let byte = bytes[index]
                // A lead byte starts a character: one code unit, two for a 4-byte sequence;
                // continuation bytes (10xxxxxx) belong to the character before.
                let width: Int
                let length: Int
                switch byte {
                case ..<0x80: (width, length) = (1, 1)
                case 0xF0...: (width, length) = (2, 4)
                case 0xE0...: (width, length) = (1, 3)
                default: (width, length) = (1, 2)
                }
                if units + width > limit { break }
                units += width
                index = min(index + length, bytes.count)
            }
            return index
        }
    }
}
