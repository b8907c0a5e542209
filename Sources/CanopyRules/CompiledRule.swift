/// One `.read`, `.write` or `.validate` of a rules document, compiled.
/// A class, so that the walks pass it with one retain rather than copying its fields.
final class CompiledRule: Sendable {
    let kind: RuleKind
    /// The rule's location in the rule tree, with wildcards: `/users/$uid`.
    let rulePath: String
    /// The expression as written (`true`/`false` for a boolean rule).
    let source: String
    let expression: Expression
    /// `expression` compiled to closures (``ExpressionCompiler``): what a check runs.
    let predicate: ExpressionCompiler.Predicate
    /// Whether the expression calls `parent()`, so that it needs its location even where its
    /// `data` and `newData` nodes are given.
    let callsParent: Bool
    /// Where the rule's value starts in the document.
    let position: SourcePosition

    init(kind: RuleKind, rulePath: String, source: String, expression: Expression, position: SourcePosition) {
        self.kind = kind
        self.rulePath = rulePath
        self.source = source
        self.expression = expression
        self.predicate = ExpressionCompiler.predicate(expression)
        self.callsParent = expression.callsParent
        self.position = position
    }
}
