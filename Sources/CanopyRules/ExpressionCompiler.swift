import CanopyCore

/// Compiles a checked ``Expression`` once, when its rules document is loaded, into closures that
/// a write's or read's check calls: boolean operators, comparisons and snapshot tests get a
/// closure each, specialised by operator and method, that works on `Bool`s and ``Node``s without
/// building a ``RuleValue`` or a ``RuleDataSnapshot``; `auth.uid`, `$wildcards`, `data`,
/// `newData` and literal `child()` paths are read straight from the context. Anything else
/// (string methods, `parent()`, untyped `auth` members, errors' messages) runs the tree-walking
/// evaluator (`EvaluationContext.value(_:)`), so results and error messages are the same either way.
enum ExpressionCompiler {
    typealias Predicate = @Sendable (EvaluationContext) throws(EvaluationError) -> Bool
    /// A boolean, or `nil` for another type of value.
    typealias Truth = @Sendable (EvaluationContext) throws(EvaluationError) -> Bool?
    typealias Value = @Sendable (EvaluationContext) throws(EvaluationError) -> RuleValue
    typealias NodeOf = @Sendable (EvaluationContext) throws(EvaluationError) -> Node

    /// The rule's result: `true` grants (or passes); a non-boolean is an error.
    static func predicate(_ expression: Expression) -> Predicate {
        if let bool = Self.bool(expression) { return bool }
        let truth = Self.truth(expression)
        return { (c: EvaluationContext) throws(EvaluationError) -> Bool in
            guard let b = try truth(c) else { throw EvaluationError(message: "the rule did not evaluate to a boolean") }
            return b
        }
    }

    /// An operand of `what` (`'&&'`, `'!'`, …) that must be a boolean.
    private static func boolean(_ expression: Expression, _ what: String) -> Predicate {
        // Always a boolean: the operand's own closure, with no wrapper.
        if let bool = Self.bool(expression) { return bool }
        let truth = Self.truth(expression)
        return { (c: EvaluationContext) throws(EvaluationError) -> Bool in
            if let b = try truth(c) { return b }
            // Not a boolean: evaluated again (expressions are pure) only to name its type.
            throw EvaluationError(message: "\(what) needs a boolean, got \(try c.value(expression).typeName)")
        }
    }

    /// The expressions whose value is always a boolean (or an error), answered by ``bool(_:)``.
    private static func isBoolean(_ expression: Expression) -> Bool {
        switch expression {
        case .and, .or, .not, .equals, .relational, .hasChildAt, .hasChildrenAt: return true
        case .snapshot(_, let method, _): return [.exists, .hasChildren, .isString, .isNumber, .isBoolean].contains(method)
        default: return false
        }
    }

    /// A boolean literal or an expression whose value is always a boolean (or an error), compiled
    /// to answer the `Bool` itself; `nil` for any other expression (see ``truth(_:)``).
    private static func bool(_ expression: Expression) -> Predicate? {
        switch expression {
        case .constant(.bool(let b)): return { _ in b }
        case .and(let l, let r):
            let (l, r) = (Self.boolean(l, "'&&'"), Self.boolean(r, "'&&'"))
            return { (c: EvaluationContext) throws(EvaluationError) -> Bool in
                guard try l(c) else { return false }
                return try r(c)
            }
        case .or(let l, let r):
            let (l, r) = (Self.boolean(l, "'||'"), Self.boolean(r, "'||'"))
            return { (c: EvaluationContext) throws(EvaluationError) -> Bool in
                if try l(c) { return true }
                return try r(c)
            }
        case .not(let x):
            let x = Self.boolean(x, "'!'")
            return { (c: EvaluationContext) throws(EvaluationError) -> Bool in !(try x(c)) }
        case .equals(let x, .constant(.null), let negated), .equals(.constant(.null), let x, let negated):
            // `auth != null`, `newData.val() == null`: a test for null, with no value built.
            let isNull = Self.isNull(x)
            return { (c: EvaluationContext) throws(EvaluationError) -> Bool in try isNull(c) != negated }
        case .equals(.snapshot(let target, .val, _), let other, let negated):
            // `newData.val() === auth.uid`: the node's value compared in place (operands in order).
            let (target, other) = (NodeSource(target), Self.value(other))
            return { (c: EvaluationContext) throws(EvaluationError) -> Bool in
                let node = try c.node(from: target)
                return node.valStrictlyEquals(try other(c)) != negated
            }
        case .equals(let other, .snapshot(let target, .val, _), let negated):
            let (other, target) = (Self.value(other), NodeSource(target))
            return { (c: EvaluationContext) throws(EvaluationError) -> Bool in
                let value = try other(c)
                return try c.node(from: target).valStrictlyEquals(value) != negated
            }
        case .equals(let l, let r, let negated):
            let (l, r) = (Self.value(l), Self.value(r))
            return { (c: EvaluationContext) throws(EvaluationError) -> Bool in
                RuleValue.strictlyEqual(try l(c), try r(c)) != negated
            }
        case .relational(let op, .snapshot(let target, .val, _), .constant(.number(let k))):
            // `newData.val() >= 0`: the number read from the node; anything else takes the
            // general path (its result or its error).
            let target = NodeSource(target)
            return { (c: EvaluationContext) throws(EvaluationError) -> Bool in
                let node = try c.node(from: target)
                guard let x = node.leafNumber else { return try Evaluator.relational(op, RuleValue(val: node), .number(k)) }
                return Evaluator.relational(op, x, k)
            }
        case .relational(let op, let l, .constant(.number(let k))):
            // A comparison with a number literal (`newData.val() >= 0`, `….length <= 200`): no
            // closure nor value for the literal; a left side that is not a number takes the
            // general path (its result or its error).
            let l = Self.value(l)
            return { (c: EvaluationContext) throws(EvaluationError) -> Bool in
                let a = try l(c)
                guard case .number(let x) = a else { return try Evaluator.relational(op, a, .number(k)) }
                return Evaluator.relational(op, x, k)
            }
        case .relational(let op, let l, let r):
            let (l, r) = (Self.value(l), Self.value(r))
            return { (c: EvaluationContext) throws(EvaluationError) -> Bool in try Evaluator.relational(op, try l(c), try r(c)) }
        case .hasChildAt(let target, let keys):
            let target = NodeSource(target)
            if keys.count == 1 {
                let key = keys[0]
                return { (c: EvaluationContext) throws(EvaluationError) -> Bool in !(try c.node(from: target).child(key).isEmpty) }
            }
            return { (c: EvaluationContext) throws(EvaluationError) -> Bool in !(try c.node(from: target).node(at: keys).isEmpty) }
        case .hasChildrenAt(let target, let paths):
            let target = NodeSource(target)
            if paths.allSatisfy({ $0.count == 1 }) {
                // `hasChildren(['author', 'title'])`: one lookup per key, no path walk.
                let keys = paths.map { $0[0] }
                return { (c: EvaluationContext) throws(EvaluationError) -> Bool in
                    let node = try c.node(from: target)
                    for key in keys where node.child(key).isEmpty { return false }
                    return true
                }
            }
            return { (c: EvaluationContext) throws(EvaluationError) -> Bool in
                let node = try c.node(from: target)
                return paths.allSatisfy { !node.node(at: $0).isEmpty }
            }
        case .snapshot(let target, let method, _) where Self.isBoolean(expression):
            let target = NodeSource(target)
            switch method {
            case .exists: return { (c: EvaluationContext) throws(EvaluationError) -> Bool in !(try c.node(from: target).isEmpty) }
            case .hasChildren: return { (c: EvaluationContext) throws(EvaluationError) -> Bool in try c.node(from: target).hasChildren }
            case .isNumber: return { (c: EvaluationContext) throws(EvaluationError) -> Bool in try c.node(from: target).isNumberLeaf }
            case .isString: return { (c: EvaluationContext) throws(EvaluationError) -> Bool in try c.node(from: target).isStringLeaf }
            default: return { (c: EvaluationContext) throws(EvaluationError) -> Bool in try c.node(from: target).isBooleanLeaf }
            }
        default: return nil
        }
    }

    /// An expression that may or may not be a boolean, through the evaluator: its boolean, or
    /// `nil` for another type of value.
    private static func truth(_ expression: Expression) -> Truth {
        { (c: EvaluationContext) throws(EvaluationError) -> Bool? in
            guard case .bool(let b) = try c.value(expression) else { return nil }
            return b
        }
    }

    private static func value(_ expression: Expression) -> Value {
        switch expression {
        case .constant(let v): return { _ in v }
        case .auth: return { (c: EvaluationContext) in c.scope.auth }
        case .authUID: return { (c: EvaluationContext) in c.scope.authUID }
        case .now: return { (c: EvaluationContext) in .number(c.scope.now) }
        case .variable(let i): return { (c: EvaluationContext) in .string(c.variables[i]) }
        case .snapshot(let target, .val, _):
            let target = NodeSource(target)
            return { (c: EvaluationContext) throws(EvaluationError) -> RuleValue in RuleValue(val: try c.node(from: target)) }
        case .length(.snapshot(let target, .val, _)):
            // `newData.val().length`: the string's length read from the node, no value built.
            let target = NodeSource(target)
            return { (c: EvaluationContext) throws(EvaluationError) -> RuleValue in
                if case .string(let s)? = try c.node(from: target).leafValue { return .number(Double(s.utf16.count)) }
                return try c.value(expression)
            }
        case .length(let base):
            let base = Self.value(base)
            return { (c: EvaluationContext) throws(EvaluationError) -> RuleValue in
                if case .string(let s) = try base(c) { return .number(Double(s.utf16.count)) }
                return try c.value(expression)
            }
        default:
            if let bool = Self.bool(expression) {
                return { (c: EvaluationContext) throws(EvaluationError) -> RuleValue in .bool(try bool(c)) }
            }
            return { (c: EvaluationContext) throws(EvaluationError) -> RuleValue in try c.value(expression) }
        }
    }

    /// Whether `expression` is null (`x === null`): `auth` answers from the scope, a snapshot's
    /// `val()` from whether its node is empty; anything else through its value.
    private static func isNull(_ expression: Expression) -> Predicate {
        switch expression {
        case .auth: return { (c: EvaluationContext) in c.scope.isAnonymous }
        case .snapshot(let target, .val, _):
            let target = NodeSource(target)
            return { (c: EvaluationContext) throws(EvaluationError) -> Bool in try c.node(from: target).isEmpty }
        default:
            let value = Self.value(expression)
            return { (c: EvaluationContext) throws(EvaluationError) -> Bool in
                if case .null = try value(c) { return true }
                return false
            }
        }
    }

    fileprivate static func node(_ expression: Expression) -> NodeOf {
        switch expression {
        case .root: return { (c: EvaluationContext) in c.scope.oldRoot }
        case .data: return { (c: EvaluationContext) in c.oldNode ?? c.scope.oldRoot.node(at: c.location) }
        case .newData:
            return { (c: EvaluationContext) throws(EvaluationError) -> Node in
                guard c.scope.hasNewData else { throw EvaluationError(message: "newData is not available") }
                return c.newNode ?? c.scope.newNode(at: c.location)
            }
        case .childAt(let target, let keys) where keys.count == 1:
            let (target, key) = (NodeSource(target), keys[0])
            return { (c: EvaluationContext) throws(EvaluationError) -> Node in try c.node(from: target).child(key) }
        case .childAt(let target, let keys):
            let target = NodeSource(target)
            return { (c: EvaluationContext) throws(EvaluationError) -> Node in try c.node(from: target).node(at: keys) }
        default:
            return { (c: EvaluationContext) throws(EvaluationError) -> Node in try c.node(expression) }
        }
    }
}

/// Where a compiled snapshot method finds its node: `data` and `newData` straight from the
/// context, with no closure call (the usual target of a rule's tests), anything else through its
/// compiled closure.
enum NodeSource: Sendable {
    case data
    case newData
    case computed(ExpressionCompiler.NodeOf)

    init(_ expression: Expression) {
        switch expression {
        case .data: self = .data
        case .newData: self = .newData
        default: self = .computed(ExpressionCompiler.node(expression))
        }
    }
}

extension EvaluationContext {
    /// The node `source` names (as ``ExpressionCompiler``'s closure for it would give it).
    @inline(__always)
    func node(from source: NodeSource) throws(EvaluationError) -> Node {
        switch source {
        case .data: return self.oldNode ?? self.scope.oldRoot.node(at: self.location)
        case .newData:
            // A context with a new node is a write's.
            if let node = self.newNode { return node }
            guard self.scope.hasNewData else { throw EvaluationError(message: "newData is not available") }
            return self.scope.newNode(at: self.location)
        case .computed(let node): return try node(self)
        }
    }
}
