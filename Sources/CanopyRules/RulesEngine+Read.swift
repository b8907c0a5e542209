package import CanopyCore

extension RulesEngine {
    /// Whether `auth` may read `path` (a get, a REST GET, or a listen with `query`) (see the DocC article *Security Rules and User Tokens*, *What the rules decide*).
    ///
    /// Walks the rule tree from the root to `path` (never below): the first `.read` that is true
    /// grants the whole subtree; a false or failing one does not stop the walk. No grant: denied.
    /// Reads are all-or-nothing: readable children never make their parent readable.
    ///
    /// - Parameters:
    ///   - query: the listen's query; `nil` for a plain read (ordered by key, no bounds).
    ///   - root: the current data.
    ///   - now: server time in milliseconds since the epoch.
    /// - Complexity: O(*d*) rule evaluations for a path of depth *d*, each costing the size of its
    ///   expression plus its tree lookups; nothing under `path` is visited.
    package func canRead(path: DatabasePath, auth: AuthContext?, root: Node, query: QueryDescription? = nil, now: Int64) -> RuleVerdict {
        var trace: [RuleEvaluation] = []
        let scope = EvaluationScope(auth: auth, now: Double(now), oldRoot: root, changes: nil, query: query ?? .none)
        var node: RuleNode? = self.document.root
        var variables: [String] = []
        let keys = path.keys
        for depth in 0...keys.count {
            guard let current = node else { break }
            if let rule = current.read {
                let context = EvaluationContext(scope: scope, location: keys[..<depth], variables: variables)
                if self.run(rule, context: context, trace: &trace) {
                    let reference = rule.reference(at: keys[..<depth])
                    let reason = self.explains ? "Read of \(path) allowed by \(reference)" : ""
                    return RuleVerdict(isAllowed: true, decidingRule: reference, reason: reason, trace: trace)
                }
            }
            guard depth < keys.count, let next = current.match(keys[depth]) else { break }
            // Bound only where a rule reads it (none below reads any otherwise).
            if next.isWildcard, next.node.rulesReadVariables { variables.append(keys[depth].string) }
            node = next.node
        }
        return RuleVerdict(isAllowed: false, decidingRule: nil, reason: "No .read rule allowed the read of \(path)", trace: trace)
    }
}
