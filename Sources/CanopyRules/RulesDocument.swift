/// A parsed and compiled `database.rules.json` (the DocC article *The Rules Language*, *The document*): the source text, kept verbatim for
/// `GET /.settings/rules.json`, and the rule tree with every expression checked and compiled.
///
/// Build one with ``init(parsing:)`` once per change of rules and share it: it is immutable and
/// `Sendable`.
package struct RulesDocument: Sendable {
    /// The document as given, comments included.
    package let source: String
    let root: RuleNode

    /// The `.indexOn` paths declared at a rule location (wildcards match any key), for the server's
    /// index checks; empty when there are none.
    /// - Complexity: O(*d*) in the depth of `path`.
    package func indexOn(at path: [String]) -> [String] {
        var node = self.root
        for key in path {
            guard let next = node.match(key) else { return [] }
            node = next.node
        }
        return node.indexOn
    }
}
