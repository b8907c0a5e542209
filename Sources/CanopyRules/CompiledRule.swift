/// One `.read`, `.write` or `.validate` of a rules document, compiled.
struct CompiledRule: Sendable {
    let kind: RuleKind
    /// The rule's location in the rule tree, with wildcards: `/users/$uid`.
    let rulePath: String
    /// The expression as written (`true`/`false` for a boolean rule).
    let source: String
    let expression: Expression
    /// Where the rule's value starts in the document.
    let position: SourcePosition
}
