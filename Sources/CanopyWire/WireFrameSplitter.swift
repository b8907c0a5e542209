/// Splits an outgoing application message into WebSocket text frames the way the SDKs do: a message
/// of at most 16,384 UTF-16 code units is one frame; a longer one is a frame holding the count, then
/// pieces of at most 16,384 code units each. A piece never ends inside a surrogate pair, so every
/// frame is valid UTF-8 on its own.
package enum WireFrameSplitter {
    /// The most UTF-16 code units in one frame.
    package static let frameLimit = 16_384

    /// The frames that carry `message`, in order.
    ///
    /// - Complexity: O(*m*) in the message's length.
    package static func frames(_ message: String, limit: Int = Self.frameLimit) -> [String] {
        let utf16 = message.utf16
        guard utf16.count > limit else { return [message] }
        var pieces: [String] = []
        var start = utf16.startIndex
        while start != utf16.endIndex {
            var end = utf16.index(start, offsetBy: limit, limitedBy: utf16.endIndex) ?? utf16.endIndex
            // Keep a surrogate pair whole: end before a trailing surrogate.
            if end != utf16.endIndex && UTF16.isTrailSurrogate(utf16[end]) {
                end = utf16.index(before: end)
            }
            // `String(_:)` of a UTF-16 slice whose ends are scalar boundaries is exact.
            pieces.append(String(Substring(utf16[start..<end])))
            start = end
        }
        return [String(pieces.count)] + pieces
    }
}
