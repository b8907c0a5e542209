import CanopyRules

/// What `canopy rules test` prints: the verdict, the deciding rule and, on request, the trace.
///
/// ```
/// ALLOWED read /users/alice
/// rule: /users/$uid/.read (line 5, column 18) at /users/alice: auth.uid == $uid
/// ```
enum RulesReport {
    static func text(_ verdict: RuleVerdict, request: String, trace: Bool) -> String {
        var lines = ["\(verdict.isAllowed ? "ALLOWED" : "DENIED") \(request)"]
        if let rule = verdict.decidingRule {
            lines.append("rule: \(self.describe(rule))")
        } else {
            lines.append("rule: none (\(oneLine(verdict.reason)))")
        }
        if trace {
            lines.append("trace:")
            for evaluation in verdict.trace {
                let outcome: String
                var suffix = ""
                switch evaluation.outcome {
                case .true: outcome = "true "
                case .false: outcome = "false"
                case .error(let message):
                    outcome = "error"
                    suffix = " (\(oneLine(message)))"
                }
                lines.append("  \(outcome) \(self.describe(evaluation.rule))\(suffix)")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// `/users/$uid/.read (line 5, column 18) at /users/alice: auth.uid == $uid`.
    static func describe(_ rule: RuleReference) -> String {
        let name = (rule.rulePath.hasSuffix("/") ? rule.rulePath : rule.rulePath + "/") + rule.kind.rawValue
        return "\(name) (line \(rule.line), column \(rule.column)) at \(rule.location): \(oneLine(rule.expression))"
    }
}
