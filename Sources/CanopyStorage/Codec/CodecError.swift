/// A decoding failure: where in the input it was found and what was wrong.
package struct CodecError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The byte offset (from the start of the reader's buffer) at which the problem was found.
    package var offset: Int
    package var reason: String

    package init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    package var description: String { "at offset \(self.offset): \(self.reason)" }
}
