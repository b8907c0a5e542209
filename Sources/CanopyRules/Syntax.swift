/// The parse tree of a rule expression, before the static checks turn it into an ``Expression``.
/// Positions are offsets (in Unicode scalars) into the expression's source.
indirect enum Syntax: Sendable {
    case null(at: Int)
    case bool(Bool, at: Int)
    case number(Double, at: Int)
    case string(String, at: Int)
    case regex(pattern: String, flags: String, at: Int)
    case array([Syntax], at: Int)
    case identifier(String, at: Int)
    case member(Syntax, String, at: Int)
    case index(Syntax, Syntax, at: Int)
    case call(Syntax, [Syntax], at: Int)
    case unary(String, Syntax, at: Int)
    case binary(String, Syntax, Syntax, at: Int)
    case conditional(Syntax, Syntax, Syntax, at: Int)

    /// Where the node starts (for a binary operator, where the operator is).
    var offset: Int {
        switch self {
        case .null(let at), .bool(_, let at), .number(_, let at), .string(_, let at), .regex(_, _, let at), .array(_, let at),
            .identifier(_, let at), .member(_, _, let at), .index(_, _, let at), .call(_, _, let at), .unary(_, _, let at),
            .binary(_, _, _, let at), .conditional(_, _, _, let at):
            return at
        }
    }
}

/// A syntax or static error inside an expression, at an offset into its source.
struct ExpressionError: Error {
    var message: String
    var offset: Int
}
