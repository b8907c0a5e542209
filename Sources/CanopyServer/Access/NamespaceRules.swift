import CanopyCore
import CanopyRules

/// A namespace's rules in force: the document as given (returned verbatim by
/// `GET /.settings/rules.json`), compiled once when it is set.
struct NamespaceRules: Sendable {
    let engine: RulesEngine

    var source: String { self.engine.document.source }

    /// Parses and compiles `source`.
    ///
    /// - Throws: ``RulesError`` naming the line, column and expression; the caller keeps the
    ///   rules it had.
    init(source: String) throws(RulesError) {
        self.engine = RulesEngine(try RulesDocument(parsing: source))
    }

    /// What a namespace starts with when none were set: everything locked on a guarded server,
    /// everything open on a development server.
    static func defaults(guarded: Bool) -> NamespaceRules {
        guarded ? Self.locked : Self.open
    }

    // The two literals are valid: `try!` cannot fail.
    static let locked = try! NamespaceRules(source: "{\n  \"rules\": {\n    \".read\": false,\n    \".write\": false\n  }\n}\n")
    static let open = try! NamespaceRules(source: "{\n  \"rules\": {\n    \".read\": true,\n    \".write\": true\n  }\n}\n")
}

extension RulesError {
    /// The one-line message of a refused rules document: where, what, and the expression.
    var report: String {
        let expression = self.expression.map { " (in \"\($0)\")" } ?? ""
        return "Invalid rules at line \(self.line), column \(self.column): \(self.message)\(expression)"
    }
}
