/// Why a rules document was refused: a syntax error in the Firebase-JSON text, a misplaced rule,
/// or an expression that fails the static checks (the DocC article *The Rules Language*: *The document*, *Checks when rules are loaded*).
///
/// `line` and `column` are 1-based and point into the document text (for an expression, at the
/// offending token inside its string). ``description`` is Firebase's wire form, `line:column: message`.
package struct RulesError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong; for an expression it ends with the expression itself.
    package var message: String
    /// The 1-based line of the error in the document text.
    package var line: Int
    /// The 1-based column (in Unicode scalars) of the error in the document text.
    package var column: Int
    /// The source of the rule expression at fault, when the error is in one.
    package var expression: String?

    package init(_ message: String, line: Int, column: Int, expression: String? = nil) {
        self.message = message
        self.line = line
        self.column = column
        self.expression = expression
    }

    /// `line:column: message`, as Firebase reports rules errors (*The Rules Language*, *The document*).
    package var description: String { "\(self.line):\(self.column): \(self.message)" }
}

/// A position in the document text.
struct SourcePosition: Sendable, Equatable {
    var line: Int
    var column: Int
}
