package import CanopyCore

extension RulesEngine {
    /// Whether `auth` may make `changes` — a set (one change) or a multi-path update (one per
    /// key) judged as one operation, all or nothing (the DocC article *Security Rules and User Tokens*, *What the rules decide*).
    ///
    /// `newData` everywhere is the tree with every change applied; `data` and `root` are the
    /// current tree. For each changed path: the first true `.write` from the root down to the path
    /// permits it (rules below never grant); then every `.validate` on the way whose location
    /// still exists in the new tree, and every `.validate` under the path that matches a location
    /// of the new data, must be true. Deleted locations are never validated.
    ///
    /// - Parameter now: server time in ms, the same used to resolve server values in `changes`.
    /// - Complexity: O(*d*) `.write`/`.validate` evaluations per change of depth *d*, plus one per
    ///   location of the written values that a rule with `.validate` matches; unrelated parts of
    ///   the tree and of the rules are never visited.
    package func canWrite(changes: [Change], auth: AuthContext?, root: Node, now: Int64) -> RuleVerdict {
        var walk = WriteWalk(engine: self, auth: auth, now: now, oldRoot: root, changes: changes)
        var granting: [RuleReference] = []
        for change in changes {
            // A priority write is a write of the node: its rules apply (*Security Rules and User Tokens*, *What the rules decide*).
            var keys = change.path.keys
            if keys.last?.isPriorityKey == true { keys.removeLast() }
            switch walk.check(keys) {
            case .granted(let rule, let depth): if self.explains { granting.append(rule.reference(at: keys[..<depth])) }
            case .denied(let verdict): return verdict
            }
        }
        guard self.explains else { return RuleVerdict(isAllowed: true, decidingRule: nil, reason: "", trace: []) }
        let paths = changes.map(\.path.description).joined(separator: ", ")
        return RuleVerdict(
            isAllowed: true,
            decidingRule: granting.first,
            reason: changes.isEmpty
                ? "An empty update changes nothing" : "Write of \(paths) allowed by \(granting.map(\.description).joined(separator: "; "))",
            trace: walk.trace
        )
    }

    /// A set: ``canWrite(changes:auth:root:now:)`` with one change.
    /// - Complexity: as ``canWrite(changes:auth:root:now:)``.
    package func canWrite(path: DatabasePath, value: Node, auth: AuthContext?, root: Node, now: Int64) -> RuleVerdict {
        self.canWrite(changes: [Change(path: path, value: value)], auth: auth, root: root, now: now)
    }
}

/// The state of one write's evaluation: the trace, and the `.validate` locations already checked
/// (multi-path updates share ancestors).
///
/// The walk holds the nodes it passes (old and new), so rules read `data` and `newData` without
/// a lookup from the root, and reuses one buffer for the location of every rule it runs and one
/// evaluation context for all its rules (each rule's location, wildcards and nodes are set in it
/// before the rule runs: no context is built, copied and destroyed per rule).
struct WriteWalk {
    enum Result {
        /// The `.write` that granted, and the depth of its location on the written path (its
        /// reference built only when asked for).
        case granted(CompiledRule, depth: Int)
        case denied(RuleVerdict)
    }

    let engine: RulesEngine
    /// The context every rule of the walk is evaluated in, updated for each.
    private var context: EvaluationContext
    /// The `.validate` that failed below a written location, and where (set when
    /// ``validateBelow(_:location:variables:oldNode:newNode:)`` answers `false`).
    private var failedValidation: (rule: CompiledRule, location: [ChildKey])?
    /// Whether ``validateBelow(_:location:variables:oldNode:newNode:)`` keeps the location of
    /// what it visits in its buffer: only when something reads it (see ``check(_:)``).
    private var tracksLocation = true
    var scope: EvaluationScope { self.context.scope }
    var oldRoot: Node { self.scope.oldRoot }
    var trace: [RuleEvaluation] = []
    /// Locations validated so far; only a write of several changes can reach one twice.
    var validated: Set<[ChildKey]> = []
    let tracksValidated: Bool
    /// The value of a write's only change (not a priority): `newData` at the written location,
    /// with no lookup.
    let writtenValue: Node?

    init(engine: RulesEngine, auth: AuthContext?, now: Int64, oldRoot: Node, changes: [RulesEngine.Change]) {
        self.engine = engine
        let scope = EvaluationScope(auth: auth, now: Double(now), oldRoot: oldRoot, changes: changes, query: .none)
        self.context = EvaluationContext(scope: scope, location: [], variables: [])
        self.tracksValidated = changes.count > 1
        self.writtenValue = changes.count == 1 && changes[0].path.keys.last?.isPriorityKey != true ? changes[0].value : nil
    }

    private mutating func run(
        _ rule: CompiledRule, _ location: ArraySlice<ChildKey>, _ variables: [String], oldNode: Node?, newNode: Node?
    ) -> Bool {
        // A rule given both its nodes reads its location only through `parent()` (or a trace).
        let needsLocation = oldNode == nil || newNode == nil || rule.callsParent || self.engine.explains
        if needsLocation { self.context.location = location }
        self.context.variables = variables
        self.context.oldNode = oldNode
        self.context.newNode = newNode
        // The location is a slice of the validation walk's buffer, which appends to it next:
        // released here so that the buffer stays uniquely referenced (no copy per append).
        defer { if needsLocation { self.context.location = [] } }
        // Without a trace, the answer alone.
        guard self.engine.explains else { return (try? rule.predicate(self.context)) ?? false }
        return self.engine.run(rule, context: self.context, trace: &self.trace)
    }

    /// The node at `keys[..<depth]` after the write: the written value itself at the written
    /// location of a single change (`check` walks the change's own keys).
    private func newNode(_ keys: [ChildKey], depth: Int) -> Node {
        if depth == keys.count, let value = self.writtenValue { return value }
        return self.scope.newNode(at: keys[..<depth])
    }

    /// Whether `location` is validated for the first time (always, for a single change).
    private mutating func firstValidation(of location: ArraySlice<ChildKey>) -> Bool {
        !self.tracksValidated || self.validated.insert(Array(location)).inserted
    }

    private func denied(_ keys: [ChildKey], _ reason: (DatabasePath) -> String, _ rule: RuleReference?) -> Result {
        .denied(RuleVerdict(isAllowed: false, decidingRule: rule, reason: reason(DatabasePath(keys)), trace: self.trace))
    }

    /// A `.validate` on a written path, to run once a `.write` granted.
    private struct Link {
        var node: RuleNode
        var depth: Int
        var variables: [String]
        var old: Node
    }

    mutating func check(_ keys: [ChildKey]) -> Result {
        // Usually one `.validate` on the path: kept inline, the others (rare) in an array.
        var firstLink: Link?
        var moreLinks: [Link] = []
        var target: (node: RuleNode, variables: [String], old: Node)?
        var node: RuleNode? = self.engine.document.root
        var old = self.oldRoot
        var variables: [String] = []
        var granted: CompiledRule?
        var grantedDepth = 0
        for depth in 0...keys.count {
            guard let current = node else { break }
            if current.validate != nil {
                let link = Link(node: current, depth: depth, variables: variables, old: old)
                if firstLink == nil { firstLink = link } else { moreLinks.append(link) }
            }
            if granted == nil, let rule = current.write, self.run(rule, keys[..<depth], variables, oldNode: old, newNode: nil) {
                granted = rule
                grantedDepth = depth
            }
            guard depth < keys.count else {
                target = (current, variables, old)
                break
            }
            guard let next = current.match(keys[depth]) else { break }
            // Bound only where a rule reads it (none below reads any otherwise).
            if next.isWildcard, next.node.rulesReadVariables { variables.append(keys[depth].string) }
            node = next.node
            old = old.child(keys[depth])
        }
        guard let granted else { return self.denied(keys, { "No .write rule allowed the write to \($0)" }, nil) }
        if let firstLink {
            if let failure = self.validate(firstLink, keys) { return failure }
            for link in moreLinks {
                if let failure = self.validate(link, keys) { return failure }
            }
        }
        if let target, target.node.hasValidation {
            // Without a trace, several changes or a `parent()` below, no rule reads its location:
            // the walk keeps none, and only a failure's verdict walks again to find where.
            self.tracksLocation = self.engine.explains || self.tracksValidated || target.node.validationCallsParent
            var location = self.tracksLocation ? keys : []
            let newNode = self.newNode(keys, depth: keys.count)
            if !self.validateBelow(target.node, location: &location, variables: target.variables, oldNode: target.old, newNode: newNode) {
                if !self.tracksLocation {
                    self.tracksLocation = true
                    location = keys
                    _ = self.validateBelow(
                        target.node, location: &location, variables: target.variables, oldNode: target.old, newNode: newNode)
                }
                guard let failure = self.failedValidation else { return self.denied(keys, { "Write of \($0) failed validation" }, nil) }
                return self.failed(failure.rule, failure.location[...], keys)
            }
        }
        return .granted(granted, depth: grantedDepth)
    }

    /// Runs the `.validate` of `link`, on the path of `keys`, unless its location is deleted or
    /// already validated: the denial if it fails, else `nil`.
    private mutating func validate(_ link: Link, _ keys: [ChildKey]) -> Result? {
        guard let rule = link.node.validate else { return nil }
        let location = keys[..<link.depth]
        let newNode = self.newNode(keys, depth: link.depth)
        guard !newNode.isEmpty, self.firstValidation(of: location) else { return nil }
        return self.run(rule, location, link.variables, oldNode: link.old, newNode: newNode) ? nil : self.failed(rule, location, keys)
    }

    private func failed(_ rule: CompiledRule, _ location: ArraySlice<ChildKey>, _ keys: [ChildKey]) -> Result {
        let reference = rule.reference(at: location)
        return self.denied(keys, { "Write of \($0) failed validation \(reference)" }, reference)
    }

    /// Validates the children of `newNode` (at `location`, a buffer the walk extends and restores)
    /// that rules match, depth first: `false` at the first that fails, recorded in
    /// ``failedValidation`` (no verdict is passed up through the recursion).
    private mutating func validateBelow(
        _ rules: RuleNode, location: inout [ChildKey], variables: [String], oldNode: Node, newNode: Node
    ) -> Bool {
        guard case .children(let children) = newNode else { return true }
        if rules.wildcard != nil {
            var passed = true
            newNode.forEachChild { key, child in
                guard let match = rules.match(key) else { return true }
                if self.tracksLocation { location.append(key) }
                defer { if self.tracksLocation { location.removeLast() } }
                passed = self.visit(
                    match.node, location: &location,
                    variables: match.isWildcard && match.node.rulesReadVariables ? variables + [key.string] : variables,
                    oldNode: oldNode.child(key), newNode: child)
                return passed
            }
            return passed
        }
        for (key, ruleChild) in rules.sortedChildren where ruleChild.hasValidation {
            guard let child = children.map[key] else { continue }
            if self.tracksLocation { location.append(key) }
            defer { if self.tracksLocation { location.removeLast() } }
            guard self.visit(ruleChild, location: &location, variables: variables, oldNode: oldNode.child(key), newNode: child) else {
                return false
            }
        }
        return true
    }

    private mutating func visit(
        _ rules: RuleNode, location: inout [ChildKey], variables: [String], oldNode: Node, newNode: Node
    ) -> Bool {
        guard rules.hasValidation, !newNode.isEmpty else { return true }
        if let rule = rules.validate, !self.tracksValidated || self.firstValidation(of: location[...]) {
            if !self.run(rule, location[...], variables, oldNode: oldNode, newNode: newNode) {
                self.failedValidation = (rule, location)
                return false
            }
        }
        return self.validateBelow(rules, location: &location, variables: variables, oldNode: oldNode, newNode: newNode)
    }
}
