import CanopyCore
import Foundation

/// A runtime error in a rule (the DocC article *The Rules Language*, *Types and errors*): the whole rule is false.
struct EvaluationError: Error {
    var message: String
}

/// What every rule of one read or write sees alike: `auth`, `now`, the tree before (and after)
/// the write, and the read's query. Built once per read or write, shared by its rules.
final class EvaluationScope {
    let auth: RuleValue
    /// Whether `auth` is null (an unauthenticated request).
    let isAnonymous: Bool
    let now: Double
    let oldRoot: Node
    /// The write's changes (`newData` is the old tree with them applied); `nil` for reads.
    let changes: [RulesEngine.Change]?
    /// The new tree, once a rule needed all of it (``newRoot``).
    var builtNewRoot: Node?
    let query: QueryDescription
    /// `auth.uid`, once a rule asked for it.
    private var uid: RuleValue?

    init(auth: RuleValue, now: Double, oldRoot: Node, changes: [RulesEngine.Change]?, query: QueryDescription) {
        self.auth = auth
        if case .null = auth { self.isAnonymous = true } else { self.isAnonymous = false }
        self.now = now
        self.oldRoot = oldRoot
        self.changes = changes
        self.query = query
    }

    /// The scope of a check by `auth` (`nil`: unauthenticated), with `auth.uid` as the credential
    /// already holds it.
    convenience init(auth: AuthContext?, now: Double, oldRoot: Node, changes: [RulesEngine.Change]?, query: QueryDescription) {
        self.init(auth: RulesEngine.authValue(auth), now: now, oldRoot: oldRoot, changes: changes, query: query)
        self.uid = auth?.uidMember.map(RuleValue.init) ?? .null
    }

    /// `auth.uid` as a member access on `auth` gives it (`null` when anonymous or missing),
    /// looked up once.
    var authUID: RuleValue {
        if let uid = self.uid { return uid }
        var uid = RuleValue.null
        if case .json(.object(let o)) = self.auth, let member = o["uid"] { uid = RuleValue(member) }
        self.uid = uid
        return uid
    }
}

/// What one evaluation of a rule sees (*The Rules Language*, *Variables*): the shared ``EvaluationScope``, the rule's
/// location and the nodes there, and the bound wildcards.
struct EvaluationContext {
    let scope: EvaluationScope
    /// The rule's location.
    var location: ArraySlice<ChildKey>
    /// The keys bound by the wildcards on the rule's path, outermost first.
    var variables: [String]
    /// The node at the rule's location in `oldRoot`, when the caller already has it (a walk
    /// down the tree): `data` then costs no lookup from the root.
    var oldNode: Node? = nil
    /// The node at the rule's location in the new tree, when the caller already has it (a walk
    /// down the written data): `newData` then costs no lookup.
    var newNode: Node? = nil

    init(scope: EvaluationScope, location: ArraySlice<ChildKey>, variables: [String], oldNode: Node? = nil, newNode: Node? = nil) {
        self.scope = scope
        self.location = location
        self.variables = variables
        self.oldNode = oldNode
        self.newNode = newNode
    }
}

/// Evaluates compiled expressions with JavaScript-like semantics and the types of *The Rules Language*, *Types and errors*.
/// Logical operators and `?:` short-circuit; any runtime error makes the rule false. Methods of
/// the context itself, so that evaluating borrows it (no copy of its references per rule).
extension EvaluationContext {
    /// The rule's result: `true` grants (or passes), anything else denies.
    /// - Complexity: O(size of the expression), plus the tree lookups it asks for.
    func evaluate(_ expression: Expression) throws(EvaluationError) -> Bool {
        guard let b = try self.truth(expression) else { throw EvaluationError(message: "the rule did not evaluate to a boolean") }
        return b
    }

    private func boolean(_ expression: Expression, _ what: String) throws(EvaluationError) -> Bool {
        if let b = try self.truth(expression) { return b }
        // Not a boolean: evaluated again (expressions are pure) only to name its type.
        throw EvaluationError(message: "\(what) needs a boolean, got \(try self.value(expression).typeName)")
    }

    private func string(_ expression: Expression, _ what: String) throws(EvaluationError) -> String {
        let v = try self.value(expression)
        guard case .string(let s) = v else { throw EvaluationError(message: "\(what) needs a string, got \(v.typeName)") }
        return s
    }

    private func snapshot(_ expression: Expression) throws(EvaluationError) -> RuleDataSnapshot {
        guard case .snapshot(let s) = try self.value(expression) else { throw EvaluationError(message: "expected a snapshot") }
        return s
    }

    /// The expression's value when it is a boolean, `nil` when it is another value. Operators,
    /// comparisons and snapshot tests are answered without building a ``RuleValue`` or a
    /// ``RuleDataSnapshot``; anything else goes through ``value(_:)``.
    private func truth(_ expression: Expression) throws(EvaluationError) -> Bool? {
        switch expression {
        case .constant(.bool(let b)): return b
        case .and(let l, let r):
            guard try self.boolean(l, "'&&'") else { return false }
            return try self.boolean(r, "'&&'")
        case .or(let l, let r):
            if try self.boolean(l, "'||'") { return true }
            return try self.boolean(r, "'||'")
        case .not(let x): return !(try self.boolean(x, "'!'"))
        case .equals(let l, let r, let negated): return RuleValue.strictlyEqual(try self.value(l), try self.value(r)) != negated
        case .relational(let op, let l, let r): return try Evaluator.relational(op, try self.value(l), try self.value(r))
        case .hasChildAt(let target, let keys): return !(try self.node(target).node(at: keys).isEmpty)
        case .hasChildrenAt(let target, let paths):
            let node = try self.node(target)
            return paths.allSatisfy { !node.node(at: $0).isEmpty }
        case .snapshot(let target, let method, let arguments) where method != .child && method != .parent:
            guard case .bool(let b) = try self.nodeCall(try self.node(target), method, arguments) else { return nil }
            return b
        default:
            guard case .bool(let b) = try self.value(expression) else { return nil }
            return b
        }
    }

    /// The node a snapshot expression views, without building the snapshot when no `parent()`
    /// is on the way (a snapshot's node does not depend on its path otherwise).
    func node(_ expression: Expression) throws(EvaluationError) -> Node {
        switch expression {
        case .root: return self.scope.oldRoot
        case .data: return self.oldNode ?? self.scope.oldRoot.node(at: self.location)
        case .newData:
            guard self.scope.hasNewData else { throw EvaluationError(message: "newData is not available") }
            return self.newNode ?? self.scope.newNode(at: self.location)
        case .childAt(let target, let keys): return try self.node(target).node(at: keys)
        case .snapshot(let target, .child, let arguments):
            let node = try self.node(target)
            return node.node(at: RuleDataSnapshot.keys(try self.string(arguments[0], "child()")))
        default: return try self.snapshot(expression).node
        }
    }

    func value(_ expression: Expression) throws(EvaluationError) -> RuleValue {
        switch expression {
        case .constant(let v): return v
        case .auth: return self.scope.auth
        case .authUID: return self.scope.authUID
        case .now: return .number(self.scope.now)
        case .root: return .snapshot(RuleDataSnapshot(isNew: false, path: [], node: self.scope.oldRoot))
        case .data:
            let node = self.oldNode ?? self.scope.oldRoot.node(at: self.location)
            return .snapshot(RuleDataSnapshot(isNew: false, path: self.location, node: node))
        case .newData:
            guard self.scope.hasNewData else { throw EvaluationError(message: "newData is not available") }
            let node = self.newNode ?? self.scope.newNode(at: self.location)
            return .snapshot(RuleDataSnapshot(isNew: true, path: self.location, node: node))
        case .variable(let i): return .string(self.variables[i])
        case .query(let property): return self.query(property)
        case .property(let base, let key): return try self.property(try self.value(base), try self.value(key))
        case .length(let base):
            let v = try self.value(base)
            switch v {
            case .string(let s): return .number(Double(s.utf16.count))
            case .json: return try self.property(v, .string("length"))
            default: throw EvaluationError(message: "length of a \(v.typeName)")
            }
        case .snapshot(let target, let method, let arguments):
            if method == .child || method == .parent { return try self.snapshotCall(try self.snapshot(target), method, arguments) }
            return try self.nodeCall(try self.node(target), method, arguments)
        case .childAt(let target, let keys): return .snapshot(try self.snapshot(target).child(keys))
        case .hasChildAt(let target, let keys): return .bool(try self.snapshot(target).hasChild(keys))
        case .hasChildrenAt(let target, let paths):
            let s = try self.snapshot(target)
            return .bool(paths.allSatisfy { s.hasChild($0) })
        case .hasChildrenList(let target, let paths):
            let s = try self.snapshot(target)
            var all = true
            for p in paths where !s.child(try self.string(p, "hasChildren()")).exists { all = false }
            return .bool(all)
        case .string(let target, let method, let arguments): return try self.stringCall(target, method, arguments)
        case .matches(let target, let regex): return .bool(regex.matches(try self.string(target, "matches()")))
        case .not(let x): return .bool(!(try self.boolean(x, "'!'")))
        case .negate(let x):
            guard case .number(let n) = try self.value(x) else { throw EvaluationError(message: "'-' needs a number") }
            return .number(-n)
        case .arithmetic(let op, let l, let r): return try Evaluator.arithmetic(op, try self.value(l), try self.value(r))
        case .relational(let op, let l, let r): return .bool(try Evaluator.relational(op, try self.value(l), try self.value(r)))
        case .equals(let l, let r, let negated): return .bool(RuleValue.strictlyEqual(try self.value(l), try self.value(r)) != negated)
        case .and(let l, let r):
            guard try self.boolean(l, "'&&'") else { return .bool(false) }
            return .bool(try self.boolean(r, "'&&'"))
        case .or(let l, let r):
            if try self.boolean(l, "'||'") { return .bool(true) }
            return .bool(try self.boolean(r, "'||'"))
        case .conditional(let c, let y, let n): return try self.value(try self.boolean(c, "'?:'") ? y : n)
        }
    }

    private func query(_ property: QueryProperty) -> RuleValue {
        let q = self.scope.query
        func bound(_ b: LeafValue??) -> RuleValue { b.map { RuleValue($0) } ?? .null }
        switch property {
        case .orderByKey: return .bool(q.order == .key)
        case .orderByValue: return .bool(q.order == .value)
        case .orderByPriority: return .bool(q.order == .priority)
        case .orderByChild:
            if case .child(let path) = q.order { return .string(path) }
            return .null
        case .startAt: return bound(q.startAt)
        case .endAt: return bound(q.endAt)
        case .equalTo: return bound(q.equalTo)
        case .limitToFirst: return q.limitToFirst.map { .number(Double($0)) } ?? .null
        case .limitToLast: return q.limitToLast.map { .number(Double($0)) } ?? .null
        }
    }

    /// Member access on untyped values: missing members and members of `null` are `null`.
    private func property(_ base: RuleValue, _ key: RuleValue) throws(EvaluationError) -> RuleValue {
        let name: String
        switch key {
        case .string(let s): name = s
        case .number(let n): name = RuleValue.format(n)
        default: throw EvaluationError(message: "a property name must be a string, got \(key.typeName)")
        }
        switch base {
        case .null, .bool, .number, .string: return .null
        case .json(.object(let o)): return o[name].map(RuleValue.init) ?? .null
        case .json(.array(let a)):
            guard let i = Int(name), a.indices.contains(i) else { return .null }
            return RuleValue(a[i])
        default: throw EvaluationError(message: "no property '\(name)' on a \(base.typeName)")
        }
    }

    private func snapshotCall(_ s: RuleDataSnapshot, _ method: SnapshotMethod, _ arguments: [Expression]) throws(EvaluationError)
        -> RuleValue
    {
        switch method {
        case .child: return .snapshot(s.child(try self.string(arguments[0], "child()")))
        case .parent:
            let parent: RuleDataSnapshot?
            if s.isNew {
                guard self.scope.hasNewData else { throw EvaluationError(message: "newData is not available") }
                parent = s.parent(lookup: self.scope.newNode(at:))
            } else {
                parent = s.parent { self.scope.oldRoot.node(at: $0) }
            }
            guard let parent else { throw EvaluationError(message: "parent() of the root") }
            return .snapshot(parent)
        default: return try self.nodeCall(s.node, method, arguments)
        }
    }

    /// A snapshot method other than `child()` and `parent()`: it needs only the snapshot's node.
    func nodeCall(_ node: Node, _ method: SnapshotMethod, _ arguments: [Expression]) throws(EvaluationError) -> RuleValue {
        switch method {
        case .child, .parent: preconditionFailure("child() and parent() need the snapshot's path")
        case .hasChild: return .bool(!node.node(at: RuleDataSnapshot.keys(try self.string(arguments[0], "hasChild()"))).isEmpty)
        case .hasChildren: return .bool(node.hasChildren)
        case .exists: return .bool(!node.isEmpty)
        case .val: return RuleValue(val: node)
        case .getPriority: return RuleValue(node.priority)
        case .isNumber: return .bool(node.leafValue?.isNumber ?? false)
        case .isString:
            if case .string? = node.leafValue { return .bool(true) }
            return .bool(false)
        case .isBoolean:
            if case .bool? = node.leafValue { return .bool(true) }
            return .bool(false)
        }
    }

    private func stringCall(_ target: Expression, _ method: StringMethod, _ arguments: [Expression]) throws(EvaluationError) -> RuleValue {
        let what = "\(method.rawValue)()"
        let s = try self.string(target, what)
        switch method {
        case .contains:
            let x = try self.string(arguments[0], what)
            return .bool(x.isEmpty || s.contains(x))
        case .beginsWith: return .bool(s.utf16.starts(with: try self.string(arguments[0], what).utf16))
        case .endsWith: return .bool(s.utf16.reversed().starts(with: try self.string(arguments[0], what).utf16.reversed()))
        case .replace:
            let find = try self.string(arguments[0], what)
            let replacement = try self.string(arguments[1], what)
            return .string(find.isEmpty ? s : s.replacingOccurrences(of: find, with: replacement))
        case .toLowerCase: return .string(s.lowercased())
        case .toUpperCase: return .string(s.uppercased())
        case .matches: throw EvaluationError(message: "matches() needs a regular expression")
        }
    }
}

/// The operators of rule expressions on runtime values.
enum Evaluator {
    static func arithmetic(_ op: ArithmeticOperator, _ l: RuleValue, _ r: RuleValue) throws(EvaluationError) -> RuleValue {
        switch (l, r) {
        case (.number(let a), .number(let b)):
            switch op {
            case .add: return .number(a + b)
            case .subtract: return .number(a - b)
            case .multiply: return .number(a * b)
            // Division by zero gives NaN in rules, not Infinity (*The Rules Language*, *Types and errors*; an expression vector holds it).
            case .divide: return .number(b == 0 ? .nan : a / b)
            case .remainder: return .number(b == 0 ? .nan : a.truncatingRemainder(dividingBy: b))
            }
        case (.string(let a), .string(let b)) where op == .add: return .string(a + b)
        case (.string(let a), .number(let b)) where op == .add: return .string(a + RuleValue.format(b))
        case (.number(let a), .string(let b)) where op == .add: return .string(RuleValue.format(a) + b)
        default: throw EvaluationError(message: "'\(op.rawValue)' of a \(l.typeName) and a \(r.typeName)")
        }
    }

    static func relational(_ op: RelationalOperator, _ l: RuleValue, _ r: RuleValue) throws(EvaluationError) -> Bool {
        let c: Int
        switch (l, r) {
        case (.number(let a), .number(let b)): return Self.relational(op, a, b)
        case (.string(let a), .string(let b)): c = ChildKey.compareUTF16(a, b)
        default: throw EvaluationError(message: "'\(op.rawValue)' of a \(l.typeName) and a \(r.typeName)")
        }
        switch op {
        case .less: return c < 0
        case .lessOrEqual: return c <= 0
        case .greater: return c > 0
        case .greaterOrEqual: return c >= 0
        }
    }

    /// ``relational(_:_:_:)`` of two numbers: false whenever one is `NaN`, as in JavaScript.
    static func relational(_ op: RelationalOperator, _ a: Double, _ b: Double) -> Bool {
        if a.isNaN || b.isNaN { return false }
        switch op {
        case .less: return a < b
        case .lessOrEqual: return a <= b
        case .greater: return a > b
        case .greaterOrEqual: return a >= b
        }
    }
}
