import CanopyCore

/// A node of the compiled rule tree: the rules at one location of the rule document, its literal
/// children and at most one `$wildcard` child (the DocC article *The Rules Language*, *The document*). Immutable once built.
final class RuleNode: Sendable {
    let read: CompiledRule?
    let write: CompiledRule?
    let validate: CompiledRule?
    let indexOn: [String]
    let children: [String: RuleNode]
    /// `children` in key order, with their keys (a write's validation walk visits them in order).
    let sortedChildren: [(key: ChildKey, node: RuleNode)]
    /// The sort words of `sortedChildren`'s keys (``CanopyCore/ChildKey/sortWord``), scanned by
    /// ``match(_:)-(ChildKey)`` before any key's string is read.
    let literalWords: ContiguousArray<UInt64>
    /// `children` by key, for a node with many (``match(_:)-(ChildKey)``).
    let keyedChildren: [ChildKey: RuleNode]
    /// The `$name` of the wildcard child, if any.
    let wildcardName: String?
    let wildcard: RuleNode?
    /// Whether this node or any descendant has a `.validate` (so a write's walk can skip the rest).
    let hasValidation: Bool
    /// Whether a `.validate` of this node or a descendant calls `parent()`, the one way such a
    /// rule reads its location (``CompiledRule/callsParent``).
    let validationCallsParent: Bool
    /// Whether a rule of this node or a descendant reads a `$wildcard` variable: where none
    /// does, a walk binds none (no array of variables built).
    let rulesReadVariables: Bool

    init(
        read: CompiledRule?, write: CompiledRule?, validate: CompiledRule?, indexOn: [String], children: [String: RuleNode],
        wildcardName: String?, wildcard: RuleNode?
    ) {
        self.read = read
        self.write = write
        self.validate = validate
        self.indexOn = indexOn
        self.children = children
        self.sortedChildren = children.sorted { $0.key < $1.key }.map { (ChildKey($0.key), $0.value) }
        self.literalWords = ContiguousArray(self.sortedChildren.map(\.key.sortWord))
        self.keyedChildren = Dictionary(uniqueKeysWithValues: self.sortedChildren.map { ($0.key, $0.node) })
        self.wildcardName = wildcardName
        self.wildcard = wildcard
        self.hasValidation = validate != nil || (wildcard?.hasValidation ?? false) || children.values.contains { $0.hasValidation }
        self.rulesReadVariables =
            [read, write, validate].contains { $0?.expression.readsVariables ?? false } || (wildcard?.rulesReadVariables ?? false)
            || children.values.contains { $0.rulesReadVariables }
        self.validationCallsParent =
            (validate?.callsParent ?? false) || (wildcard?.validationCallsParent ?? false)
            || children.values.contains { $0.validationCallsParent }
    }

    subscript(kind: RuleKind) -> CompiledRule? {
        switch kind {
        case .read: return self.read
        case .write: return self.write
        case .validate: return self.validate
        }
    }

    /// The rule node for the child `key` (literal children first, then the wildcard) and whether
    /// the wildcard matched (which binds the key to `wildcardName`). Keys match as data keys do:
    /// the same UTF-8 bytes.
    /// - Complexity: O(1) expected.
    func match(_ key: ChildKey) -> (node: RuleNode, isWildcard: Bool)? {
        // A few literal children (the usual case) are compared by their sort words, not hashed.
        if self.literalWords.count <= 8 {
            let word = key.sortWord
            for i in self.literalWords.indices where self.literalWords[i] == word && self.sortedChildren[i].key == key {
                return (self.sortedChildren[i].node, false)
            }
        } else if let literal = self.keyedChildren[key] {
            return (literal, false)
        }
        if let wildcard = self.wildcard { return (wildcard, true) }
        return nil
    }

    /// ``match(_:)-(ChildKey)`` for a key given as a string.
    func match(_ key: String) -> (node: RuleNode, isWildcard: Bool)? { self.match(ChildKey(key)) }
}
