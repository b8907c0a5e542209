/// A value of the "Firebase JSON" rules format, with the position where it starts.
struct FirebaseJSON: Sendable {
    enum Kind: Sendable {
        case null
        case bool(Bool)
        case number(Double)
        /// A string, with the document position of each of its Unicode scalars (for errors
        /// inside expressions) and of the closing quote.
        case string(String, positions: [SourcePosition])
        case array([FirebaseJSON])
        case object([Member])
    }

    struct Member: Sendable {
        var key: String
        var keyPosition: SourcePosition
        var value: FirebaseJSON
    }

    var kind: Kind
    var position: SourcePosition
}
