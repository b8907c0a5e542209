/// Reassembles the SDKs' application messages from WebSocket text frames.
///
/// A message longer than 16,384 UTF-16 code units travels as a frame holding only the decimal
/// count of frames that follow, then the pieces, which concatenate to the message. When no message
/// is being assembled, a frame of at most six characters, all digits, is such a count (`0` is the
/// clients' keep-alive and announces nothing); any other frame is a whole message.
package struct WireFrameAssembler: Sendable {
    /// Why a sequence of frames cannot be a message.
    package enum Failure: Error, Equatable, Sendable {
        /// A count above ``WireFrameAssembler/maxFrames``.
        case tooManyFrames(Int)
        /// The message being assembled grew past ``WireFrameAssembler/maxMessageBytes``.
        case messageTooLarge
    }

    /// The most frames one message may announce (the SDKs split at 16,384 characters, so this
    /// allows messages of about 160 MB of characters; the byte limit below is the real bound).
    package static let maxFrames = 9_999

    /// The largest message, in UTF-8 bytes, that may be assembled.
    package let maxMessageBytes: Int
    private var remaining = 0
    private var pieces: [String] = []
    private var bytes = 0

    package init(maxMessageBytes: Int) {
        self.maxMessageBytes = maxMessageBytes
    }

    /// Whether a message is being assembled.
    package var isAssembling: Bool { self.remaining > 0 }

    /// Takes one text frame; returns the message it completes, if any (`nil` for a count, a
    /// keep-alive or a piece of a longer message).
    ///
    /// - Complexity: O(*m*) in the frame's length; a completed message costs its whole length once.
    package mutating func receive(_ frame: String) throws(Failure) -> String? {
        if self.remaining > 0 {
            self.bytes += frame.utf8.count
            if self.bytes > self.maxMessageBytes { throw .messageTooLarge }
            self.pieces.append(frame)
            self.remaining -= 1
            guard self.remaining == 0 else { return nil }
            defer {
                self.pieces = []
                self.bytes = 0
            }
            return self.pieces.joined()
        }
        if let count = Self.frameCount(frame) {
            if count > Self.maxFrames { throw .tooManyFrames(count) }
            self.remaining = count
            return nil
        }
        if frame.utf8.count > self.maxMessageBytes { throw .messageTooLarge }
        return frame
    }

    /// The count a frame announces, when it is one: one to six ASCII digits.
    static func frameCount(_ frame: String) -> Int? {
        let utf8 = frame.utf8
        guard (1...6).contains(utf8.count) else { return nil }
        var value = 0
        for byte in utf8 {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }
}
