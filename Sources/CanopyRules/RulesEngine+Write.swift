package import CanopyCore

extension RulesEngine {
    /// Whether `auth` may make `changes` — a set (one change) or a multi-path update (one per
    /// key) judged as one operation, all or nothing (spec §5).
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
        var newRoot = root
        for change in changes { newRoot.set(change.value, at: change.path.keys[...]) }
        var walk = WriteWalk(engine: self, auth: auth, now: now, oldRoot: root, newRoot: newRoot)
        var granting: [RuleReference] = []
        for change in changes {
            // A priority write is a write of the node: its rules apply (spec §5.5).
            var keys = change.path.keys
            if keys.last?.isPriorityKey == true { keys.removeLast() }
            switch walk.check(keys) {
            case .granted(let reference): granting.append(reference)
            case .denied(let verdict): return verdict
            }
        }
        guard self.explains else { return RuleVerdict(isAllowed: true, decidingRule: granting.first, reason: "", trace: []) }
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
struct WriteWalk {
    enum Result {
        case granted(RuleReference)
        case denied(RuleVerdict)
    }

    let engine: RulesEngine
    let auth: RuleValue
    let now: Int64
    let oldRoot: Node
    let newRoot: Node
    var trace: [RuleEvaluation] = []
    var validated: Set<[ChildKey]> = []

    init(engine: RulesEngine, auth: AuthContext?, now: Int64, oldRoot: Node, newRoot: Node) {
        self.engine = engine
        self.auth = RulesEngine.authValue(auth)
        self.now = now
        self.oldRoot = oldRoot
        self.newRoot = newRoot
    }

    private mutating func run(_ rule: CompiledRule, _ location: [ChildKey], _ variables: [String], newNode: Node? = nil) -> (
        Bool, RuleReference
    ) {
        var context = self.engine.context(
            auth: self.auth, now: self.now, oldRoot: self.oldRoot, newRoot: self.newRoot, location: location, variables: variables,
            query: .none)
        context.newNode = newNode
        return self.engine.run(rule, location: location, context: context, trace: &self.trace)
    }

    private func denied(_ reason: String, _ rule: RuleReference?) -> Result {
        .denied(RuleVerdict(isAllowed: false, decidingRule: rule, reason: reason, trace: self.trace))
    }

    mutating func check(_ keys: [ChildKey]) -> Result {
        let path = DatabasePath(keys)
        var chain: [(node: RuleNode, depth: Int, variables: [String])] = []
        var node: RuleNode? = self.engine.document.root
        var variables: [String] = []
        var granted: RuleReference?
        for depth in 0...keys.count {
            guard let current = node else { break }
            chain.append((current, depth, variables))
            if granted == nil, let rule = current.write {
                let (ok, reference) = self.run(rule, Array(keys[..<depth]), variables)
                if ok { granted = reference }
            }
            guard depth < keys.count, let next = current.match(keys[depth].string) else {
                node = nil
                continue
            }
            if next.isWildcard { variables.append(keys[depth].string) }
            node = next.node
        }
        guard let granted else { return self.denied("No .write rule allowed the write to \(path)", nil) }
        for link in chain {
            guard let rule = link.node.validate else { continue }
            let location = Array(keys[..<link.depth])
            guard !self.newRoot.node(at: location).isEmpty, self.validated.insert(location).inserted else { continue }
            let (ok, reference) = self.run(rule, location, link.variables)
            if !ok { return self.denied("Write of \(path) failed validation \(reference)", reference) }
        }
        if let last = chain.last, last.depth == keys.count, last.node.hasValidation {
            if let failure = self.validateBelow(
                last.node, location: keys, variables: last.variables, newNode: self.newRoot.node(at: keys), path: path)
            {
                return failure
            }
        }
        return .granted(granted)
    }

    /// Validates the children of `newNode` that rules match, depth first.
    private mutating func validateBelow(_ rules: RuleNode, location: [ChildKey], variables: [String], newNode: Node, path: DatabasePath)
        -> Result?
    {
        guard case .children(let children) = newNode else { return nil }
        if rules.wildcard != nil {
            for (key, child) in children.map {
                guard let match = rules.match(key.string) else { continue }
                if let failure = self.visit(
                    match.node, location: location + [key], variables: match.isWildcard ? variables + [key.string] : variables,
                    newNode: child, path: path)
                {
                    return failure
                }
            }
        } else {
            for (name, ruleChild) in rules.children.sorted(by: { $0.key < $1.key }) where ruleChild.hasValidation {
                let key = ChildKey(name)
                let child = children.map[key] ?? .empty
                if child.isEmpty { continue }
                if let failure = self.visit(ruleChild, location: location + [key], variables: variables, newNode: child, path: path) {
                    return failure
                }
            }
        }
        return nil
    }

    private mutating func visit(_ rules: RuleNode, location: [ChildKey], variables: [String], newNode: Node, path: DatabasePath) -> Result?
    {
        guard rules.hasValidation, !newNode.isEmpty else { return nil }
        if let rule = rules.validate, self.validated.insert(location).inserted {
            let (ok, reference) = self.run(rule, location, variables, newNode: newNode)
            if !ok { return self.denied("Write of \(path) failed validation \(reference)", reference) }
        }
        return self.validateBelow(rules, location: location, variables: variables, newNode: newNode, path: path)
    }
}
