/// Limits the decoder enforces.
enum CodecLimits {
    /// The deepest nesting of children nodes accepted, so damaged input cannot exhaust the stack.
    static let maxDepth = 1000
}
