package import CanopyCore

/// Decides reads and writes under a ``RulesDocument`` with Firebase's semantics (the DocC articles *Security Rules and User Tokens* and *The Rules Language*).
///
/// Pure: no I/O, no threads, no clock (`now` is an argument); `Sendable`, so one engine per rules
/// version can serve every connection. Admin and `owner` credentials bypass rules: do not call
/// the engine for them.
///
/// ```swift
/// let engine = RulesEngine(try RulesDocument(parsing: text))
/// let verdict = engine.canRead(path: path, auth: AuthContext(uid: "alice"), root: tree, now: ms)
/// ```
package struct RulesEngine: Sendable {
    package let document: RulesDocument
    /// Whether verdicts carry their trace and an explanation of what allowed them (the rules
    /// playground, tests); a server that only needs the answer turns it off.
    package let explains: Bool
    /// Whether every write is allowed whoever makes it: `.write` is the literal `true` at the
    /// root (a grant cascades and cannot be revoked below) and no `.validate`
    /// exists anywhere. A server asks before judging a write, to skip the walk (a development
    /// server's rules are these).
    package let grantsEveryWrite: Bool

    package init(_ document: RulesDocument, explains: Bool = true) {
        self.document = document
        self.explains = explains
        if case .constant(.bool(true)) = document.root.write?.expression {
            self.grantsEveryWrite = !document.root.hasValidation
        } else {
            self.grantsEveryWrite = false
        }
    }

    /// One location written with its new value (`.empty` deletes). Server values must already be
    /// resolved with the same `now` that is passed to ``RulesEngine/canWrite(changes:auth:root:now:)``.
    package struct Change: Sendable {
        package var path: DatabasePath
        package var value: Node

        package init(path: DatabasePath, value: Node) {
            self.path = path
            self.value = value
        }
    }

    /// `auth` as rules see it: converted once per read or write, not once per rule.
    static func authValue(_ auth: AuthContext?) -> RuleValue { auth.map { RuleValue($0.variable) } ?? .null }

    /// Evaluates one rule; an error is a `false` (*The Rules Language*, *Types and errors*). Appends it to `trace` when the
    /// engine ``explains``.
    func run(_ rule: CompiledRule, context: EvaluationContext, trace: inout [RuleEvaluation]) -> Bool {
        let outcome: RuleEvaluation.Outcome
        do throws(EvaluationError) {
            outcome = try rule.predicate(context) ? .true : .false
        } catch {
            outcome = .error(error.message)
        }
        if self.explains { trace.append(RuleEvaluation(rule: rule.reference(at: context.location), outcome: outcome)) }
        return outcome == .true
    }
}

extension CompiledRule {
    /// The rule as a verdict names it, evaluated at `location` (built only when asked for).
    func reference(at location: ArraySlice<ChildKey>) -> RuleReference {
        RuleReference(
            kind: self.kind, rulePath: self.rulePath, location: DatabasePath(Array(location)), expression: self.source,
            line: self.position.line, column: self.position.column)
    }
}
