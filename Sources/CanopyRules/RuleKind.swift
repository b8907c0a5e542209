/// The kinds of rule a rule node may hold (the DocC article *The Rules Language*, *The document*).
package enum RuleKind: String, Sendable, Hashable, CaseIterable {
    case read = ".read"
    case write = ".write"
    case validate = ".validate"
}
