package import CanopyCore

/// A rule of the document, as a verdict names it.
package struct RuleReference: Sendable, Equatable, CustomStringConvertible {
    package var kind: RuleKind
    /// The rule's place in the rule tree, with wildcards: `/users/$uid`.
    package var rulePath: String
    /// The concrete location it was evaluated at: `/users/alice`.
    package var location: DatabasePath
    /// The expression as written (`true`/`false` for boolean rules).
    package var expression: String
    /// Where the rule is in the document (1-based).
    package var line: Int
    package var column: Int

    package var description: String {
        "\(self.rulePath)/\(self.kind.rawValue): \"\(self.expression)\" (line \(self.line)) at \(self.location)"
    }
}

/// One rule evaluated for a request, and what it gave.
package struct RuleEvaluation: Sendable, Equatable {
    package enum Outcome: Sendable, Equatable {
        case `true`
        case `false`
        /// A runtime error (which denies: *The Rules Language*, *Types and errors*), with its explanation.
        case error(String)
    }

    package var rule: RuleReference
    package var outcome: Outcome
}

/// The answer to "may this read or write happen?", with the rule that decided it and every rule
/// evaluated on the way (the console's rules playground view).
package struct RuleVerdict: Sendable, Equatable {
    package var isAllowed: Bool
    /// The `.read`/`.write` that granted, or the `.validate` that failed; `nil` when nothing
    /// granted access (default deny) or for an empty write.
    package var decidingRule: RuleReference?
    /// Why, in words, for `canopy rules test`.
    package var reason: String
    /// Every rule evaluated, in order.
    package var trace: [RuleEvaluation]
}
