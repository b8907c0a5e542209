package import Canopy
package import CanopyCore
package import CanopyRules

/// A namespace's rules in force: the document as given (returned verbatim by
/// `GET /.settings/rules.json`), compiled once when it is set, and the server's two questions to
/// them (``mayRead(_:query:auth:access:)``, ``permitted(_:auth:access:)``). Package-visible for
/// `canopy-bench`, which measures them.
package struct NamespaceRules: Sendable {
    let engine: RulesEngine

    var source: String { self.engine.document.source }

    /// Parses and compiles `source`.
    ///
    /// - Throws: ``RulesError`` naming the line, column and expression; the caller keeps the
    ///   rules it had.
    package init(source: String) throws(RulesError) {
        // The server needs answers, not explanations (`canopy rules test` gives those).
        self.engine = RulesEngine(try RulesDocument(parsing: source), explains: false)
    }

    /// What a namespace starts with when none were set: everything locked on a guarded server,
    /// everything open on a development server.
    static func defaults(guarded: Bool) -> NamespaceRules {
        guarded ? Self.locked : Self.open
    }

    /// Whether `auth` (`nil`: unauthenticated) may read `path`, with `query` for a filtered query
    /// (loop thread).
    /// - Complexity: O(*d*) rule evaluations for a path of depth *d*.
    package func mayRead(_ path: DatabasePath, query: QueryParams?, auth: AuthContext?, access: LoopAccess) -> Bool {
        self.engine.canRead(path: path, auth: auth, root: access.root, query: query.map(QueryDescription.init), now: access.now()).isAllowed
    }

    /// Whether the rules declare the `.indexOn` at `path` that Firebase needs for `query`: the
    /// child it orders by, or `.value`; queries by key or priority need none, and neither do the
    /// default rules (a namespace whose rules nobody wrote has nothing to amend). Canopy indexes
    /// every query on demand; a listen without one is answered with Firebase's `no_index` warning.
    /// - Complexity: O(*d*) for a path of depth *d*.
    func declaresIndex(for query: QueryParams, at path: DatabasePath) -> Bool {
        if self.source == Self.open.source || self.source == Self.locked.source { return true }
        let spec: String
        switch query.index {
        case .key, .priority: return true
        case .value: spec = ".value"
        case .child(let child): spec = child.map(\.string).joined(separator: "/")
        }
        return self.engine.document.indexOn(at: path.keys.map(\.string)).contains(spec)
    }

    /// `write` as it may be applied for `auth` (its server values resolved, so that the rules
    /// judged what is stored), or `nil` when the rules refuse it (loop thread: judge and apply in
    /// one job, so that nothing comes between).
    /// - Complexity: as ``CanopyRules/RulesEngine/canWrite(changes:auth:root:now:)``: the rules on
    ///   the written paths and the locations of the written data that `.validate` rules match.
    package func permitted(_ write: WriteOperation, auth: AuthContext?, access: LoopAccess) -> WriteOperation? {
        // Nothing to judge: the write goes as an administrator's does (server values resolved
        // when it is applied).
        if self.engine.grantsEveryWrite { return write }
        let root = access.root
        let now = access.now()
        let resolved = write.resolved(root: root, now: now)
        let verdict = self.engine.canWrite(changes: resolved.ruleChanges(root: root), auth: auth, root: root, now: now)
        return verdict.isAllowed ? resolved : nil
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
