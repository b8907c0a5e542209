/// The kinds of rule a rule node may hold (spec §1.1).
package enum RuleKind: String, Sendable, Hashable, CaseIterable {
    case read = ".read"
    case write = ".write"
    case validate = ".validate"
}
