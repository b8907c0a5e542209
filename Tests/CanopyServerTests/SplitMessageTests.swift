import CanopyWire
import NIOCore
import NIOWebSocket
import Testing

@testable import CanopyServer

/// A long answer written as split frames, a chunk at a time.
@Suite("Split messages")
struct SplitMessageTests {
    /// Every frame of `message`, written in chunks of `budget` bytes.
    static func frames(_ message: String, budget: Int = 100_000) throws -> (count: Int, frames: [String], chunks: Int) {
        var split = SplitMessage(Rendering(Array(message.utf8)))
        var frames: [String] = []
        var chunks = 0
        while !split.isFinished {
            var buffer = ByteBuffer()
            split.writeFrames(into: &buffer, budget: budget)
            chunks += 1
            frames += try WrittenFrames.decode(buffer).map { frame in
                #expect(frame.opcode == .text && frame.fin && frame.maskKey == nil)
                return try #require(String(validating: frame.data.readableBytesView, as: UTF8.self), "every frame is UTF-8")
            }
        }
        return (split.count, frames, chunks)
    }

    @Test("the count, then pieces of at most 16,384 UTF-16 code units that never split a character, as the SDKs split")
    func pieces() throws {
        // One-, two-, three- and four-byte characters (the last two UTF-16 code units each),
        // placed so that a piece boundary falls inside several of them.
        let message = String(repeating: "a€😀é", count: 20_000) + "😀"
        let (count, frames, chunks) = try Self.frames(message)
        #expect(frames.first == String(count))
        #expect(count == frames.count - 1)
        #expect(frames.dropFirst().joined() == message)
        #expect(frames.dropFirst().allSatisfy { $0.utf16.count <= WireFrameSplitter.frameLimit })
        // ASCII text splits exactly as the client-side splitter does.
        let ascii = String(repeating: "x", count: 40_000)
        #expect(try Self.frames(ascii).frames == WireFrameSplitter.frames(ascii))
        #expect(chunks > 1, "written a chunk at a time")
    }

    @Test("a message too long for the most pieces of the usual length gets longer pieces: the count stays in the clients' range")
    func count() throws {
        let text = Array(String(repeating: "yé😀", count: 1_000).utf8)
        var split = SplitMessage(Rendering(text), pieceLimit: 16, maxPieces: 50)
        #expect(split.count <= 50 && split.count >= 25)
        var buffer = ByteBuffer()
        while !split.isFinished { split.writeFrames(into: &buffer, budget: 1_000) }
        let frames = try WrittenFrames.decode(buffer).map { String(buffer: $0.data) }
        #expect(frames.count == split.count + 1)
        #expect(Array(frames.dropFirst().joined().utf8) == text)
    }
}
