import CanopyWire
import Testing

@Suite("Splitting and reassembling messages over 16,384 characters")
struct WireFramingTests {
    @Test("a message of at most 16,384 UTF-16 units is one frame")
    func shortMessageIsOneFrame() {
        let message = String(repeating: "a", count: 16_384)
        #expect(WireFrameSplitter.frames(message) == [message])
    }

    @Test("a 40,000-character message is a count and three pieces, as the JS SDK sends it")
    func longMessageSplitsLikeJS() {
        let message = "{" + String(repeating: "x", count: 39_999)
        let frames = WireFrameSplitter.frames(message)
        #expect(frames.map(\.utf16.count) == [1, 16_384, 16_384, 7_232])
        #expect(frames[0] == "3")
        #expect(frames.dropFirst().joined() == message)
    }

    @Test("a surrogate pair at a piece boundary stays whole")
    func surrogatePairsStayWhole() {
        let message = String(repeating: "a", count: 16_383) + "😀" + String(repeating: "b", count: 10)
        let frames = WireFrameSplitter.frames(message)
        #expect(frames.count == 3)
        #expect(frames[1].utf16.count == 16_383)
        #expect(frames[2].hasPrefix("😀"))
        #expect(frames.dropFirst().joined() == message)
    }

    @Test("the assembler returns whole messages, swallows keep-alives and joins counted pieces")
    func assemblerRoundTrip() throws {
        var assembler = WireFrameAssembler(maxMessageBytes: 1 << 20)
        #expect(try assembler.receive("0") == nil)
        #expect(try assembler.receive(#"{"t":"c"}"#) == #"{"t":"c"}"#)
        let message = "{" + String(repeating: "é", count: 40_000) + "}"
        var out: [String] = []
        for frame in WireFrameSplitter.frames(message) {
            if let whole = try assembler.receive(frame) { out.append(whole) }
        }
        #expect(out == [message])
        #expect(!assembler.isAssembling)
        // A piece of a counted message is taken as it is, even when it looks like a count.
        #expect(try assembler.receive("2") == nil)
        #expect(try assembler.receive("12") == nil)
        #expect(try assembler.receive("34") == "1234")
    }

    @Test("counts above 9,999 and messages over the byte limit are refused")
    func assemblerLimits() {
        var assembler = WireFrameAssembler(maxMessageBytes: 100)
        #expect(throws: WireFrameAssembler.Failure.tooManyFrames(10_000)) { try assembler.receive("10000") }
        var small = WireFrameAssembler(maxMessageBytes: 100)
        #expect(throws: WireFrameAssembler.Failure.messageTooLarge) { try small.receive("{" + String(repeating: "a", count: 100)) }
        var pieces = WireFrameAssembler(maxMessageBytes: 100)
        #expect(throws: WireFrameAssembler.Failure.messageTooLarge) {
            _ = try pieces.receive("3")
            _ = try pieces.receive(String(repeating: "a", count: 60))
            _ = try pieces.receive(String(repeating: "a", count: 60))
        }
    }
}
