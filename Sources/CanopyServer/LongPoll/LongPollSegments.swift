import Foundation

/// Reassembles a long-poll client's messages from the segments its requests carry.
///
/// The SDK sends each message as the web-safe base64 of its JSON text (alphabet `A-Z a-z 0-9 - _`,
/// `.` for padding), cut into segments of at most 1,840 characters, numbered in one sequence for
/// the whole session (from 0), each with the number of segments of its message. A request carries
/// a few segments (`seg<i>`, `ts<i>`, `d<i>`), and two requests may be in flight at once, so
/// segments are kept until every one of the next message has come, then decoded in order.
struct LongPollSegments {
    /// One segment, as a request carries it.
    struct Segment: Equatable, Sendable {
        /// Its number in the client's sequence of segments.
        var number: Int
        /// The number of segments of its message.
        var total: Int
        /// Its base64 text.
        var data: Substring
    }

    /// Why segments cannot be taken: the long-poll connection's messages are no longer sound.
    enum Failure: Error, Equatable {
        /// Segments of one message disagree on its number of segments.
        case inconsistent(Int)
        /// A message is not base64 of UTF-8 text.
        case undecodable(Int)
        /// More than the limit waits to be reassembled.
        case tooLarge
    }

    /// The first segment of the next message.
    private(set) var next = 0
    private var pending: [Int: Segment] = [:]
    private var pendingBytes = 0
    /// The most bytes of base64 text that may wait.
    let maxBytes: Int

    init(maxBytes: Int) {
        self.maxBytes = maxBytes
    }

    /// Takes `segments` (a segment already taken is ignored: a repeated request); returns the
    /// messages they completed, in order, as JSON text.
    mutating func receive(_ segments: [Segment]) throws(Failure) -> [String] {
        for segment in segments where segment.number >= self.next && self.pending[segment.number] == nil {
            guard self.pendingBytes + segment.data.utf8.count <= self.maxBytes else { throw .tooLarge }
            self.pending[segment.number] = segment
            self.pendingBytes += segment.data.utf8.count
        }
        var messages: [String] = []
        while let first = self.pending[self.next] {
            let end = self.next + first.total
            guard (self.next..<end).allSatisfy({ self.pending[$0] != nil }) else { break }
            var text = ""
            for number in self.next..<end {
                let segment = self.pending.removeValue(forKey: number)!
                self.pendingBytes -= segment.data.utf8.count
                guard segment.total == first.total else { throw .inconsistent(self.next) }
                text += segment.data
            }
            guard let message = Self.decode(text) else { throw .undecodable(self.next) }
            messages.append(message)
            self.next = end
        }
        return messages
    }

    /// The text whose UTF-8 `base64` encodes (web-safe or standard alphabet, padded or not).
    static func decode(_ base64: String) -> String? {
        var standard = String(
            base64.map { character -> Character in
                switch character {
                case "-": "+"
                case "_": "/"
                case ".": "="
                default: character
                }
            })
        while standard.hasSuffix("=") { standard.removeLast() }
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: standard) else { return nil }
        return String(validating: data, as: UTF8.self)
    }
}
