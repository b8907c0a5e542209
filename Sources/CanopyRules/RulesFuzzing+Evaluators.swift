package import CanopyCore

extension RulesFuzzing {
    /// Compares, for every rule of `document`, its compiled closures (``ExpressionCompiler``, what
    /// checks run) with the tree-walking evaluator (`EvaluationContext.evaluate(_:)`, the
    /// reference) at the rule's own location (wildcards bound to `values`), under each of `auths`,
    /// over `data` before and `newData` after a write of `written` at that location. Returns the
    /// first disagreement (result or error message), `nil` when they agree everywhere.
    /// - Complexity: one pair of evaluations per rule, auth and value.
    package static func evaluatorsDisagree(
        _ document: RulesDocument, auths: [AuthContext?], data: Node, written: [Node], query: QueryDescription = .none, now: Int64 = 1,
        values: [String] = ["x", "a", "1"]
    ) -> String? {
        var failure: String?
        func visit(_ node: RuleNode, _ keys: [ChildKey], _ variables: [String]) {
            for rule in [node.read, node.write, node.validate].compactMap({ $0 }) where failure == nil {
                for auth in auths {
                    for value in written {
                        let change = RulesEngine.Change(path: DatabasePath(keys), value: value)
                        let scope = EvaluationScope(
                            auth: RulesEngine.authValue(auth), now: Double(now), oldRoot: data,
                            changes: rule.kind == .read ? nil : [change], query: query)
                        let context = EvaluationContext(scope: scope, location: keys[...], variables: variables)
                        let compiled = Self.outcome { () throws(EvaluationError) in try rule.predicate(context) }
                        let interpreted = Self.outcome { () throws(EvaluationError) in try context.evaluate(rule.expression) }
                        if compiled != interpreted {
                            failure =
                                "\(rule.reference(at: keys[...])) with auth \(auth.map { "\($0.variable)" } ?? "null"): "
                                + "compiled \(compiled), interpreted \(interpreted)"
                            return
                        }
                    }
                }
            }
            guard failure == nil, keys.count < 4 else { return }
            for (key, child) in node.sortedChildren { visit(child, keys + [key], variables) }
            if let wildcard = node.wildcard {
                for value in values { visit(wildcard, keys + [ChildKey(value)], variables + [value]) }
            }
        }
        visit(document.root, [], [])
        return failure
    }

    private static func outcome(_ body: () throws(EvaluationError) -> Bool) -> String {
        do throws(EvaluationError) {
            return try body() ? "true" : "false"
        } catch {
            return "error: \(error.message)"
        }
    }
}
