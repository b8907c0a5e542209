import CanopyCore

/// A checked, compiled rule expression: every name resolved, every method known, ready to run.
indirect enum Expression: Sendable {
    case constant(RuleValue)
    case auth
    /// `auth.uid` (or `auth['uid']`): looked up once per read or write, however many rules ask.
    case authUID
    case now
    case root
    case data
    case newData
    /// The key bound by the wildcard at this index of the rule path's wildcards.
    case variable(Int)
    case query(QueryProperty)
    /// Member access on an untyped (`auth`) value: `auth.uid`, `auth.token['email']`.
    case property(Expression, Expression)
    /// `.length` of a string, or of an untyped value that must be a string at run time.
    case length(Expression)
    case snapshot(Expression, SnapshotMethod, [Expression])
    case hasChildrenList(Expression, [Expression])
    /// `child('a/b')` with a literal path, split into keys when compiled.
    case childAt(Expression, [ChildKey])
    /// `hasChild('a/b')` with a literal path.
    case hasChildAt(Expression, [ChildKey])
    /// `hasChildren(['a', 'b'])` with literal paths.
    case hasChildrenAt(Expression, [[ChildKey]])
    case string(Expression, StringMethod, [Expression])
    case matches(Expression, CompiledRegex)
    case not(Expression)
    case negate(Expression)
    case arithmetic(ArithmeticOperator, Expression, Expression)
    case relational(RelationalOperator, Expression, Expression)
    case equals(Expression, Expression, negated: Bool)
    case and(Expression, Expression)
    case or(Expression, Expression)
    case conditional(Expression, Expression, Expression)
}

/// The methods of `RuleDataSnapshot` (*The Rules Language*, *Snapshots*).
enum SnapshotMethod: String, Sendable, CaseIterable {
    case child, parent, hasChild, hasChildren, exists, val, getPriority, isNumber, isString, isBoolean
}

/// The string methods (*The Rules Language*, *Strings*); `matches` and `length` are handled apart.
enum StringMethod: String, Sendable, CaseIterable {
    case contains, beginsWith, endsWith, replace, toLowerCase, toUpperCase, matches

    var arity: Int {
        switch self {
        case .contains, .beginsWith, .endsWith, .matches: return 1
        case .replace: return 2
        case .toLowerCase, .toUpperCase: return 0
        }
    }
}

/// The properties of `query` in `.read` rules (*The Rules Language*, *Variables*).
enum QueryProperty: String, Sendable, CaseIterable {
    case orderByKey, orderByPriority, orderByValue, orderByChild, startAt, endAt, equalTo, limitToFirst, limitToLast
}

enum ArithmeticOperator: String, Sendable {
    case add = "+"
    case subtract = "-"
    case multiply = "*"
    case divide = "/"
    case remainder = "%"
}
enum RelationalOperator: String, Sendable {
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
}

/// What the static checks know of an expression's type (*The Rules Language*, *Checks when rules are loaded* and *Types and errors*).
enum StaticType: Sendable, Equatable, CustomStringConvertible {
    case boolean, number, string, null, snapshot, query, regex, array
    /// An untyped `auth` value: any JSON, members allowed, checked at run time.
    case any
    /// A primitive of unknown type (`val()`, `getPriority()`, query bounds): only string members.
    case primitive

    var description: String {
        switch self {
        case .boolean: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .null: return "null"
        case .snapshot: return "RuleDataSnapshot"
        case .query: return "query"
        case .regex: return "regular expression"
        case .array: return "array"
        case .any: return "auth value"
        case .primitive: return "value"
        }
    }

    var mayBeBoolean: Bool { self == .boolean || self == .any || self == .primitive }
    var mayBeNumber: Bool { self == .number || self == .any || self == .primitive }
    var mayBeString: Bool { self == .string || self == .any || self == .primitive }
    var isComparable: Bool { self != .snapshot && self != .query && self != .regex && self != .array }

    /// The type of `a ? x : y` from the types of `x` and `y`.
    static func join(_ a: StaticType, _ b: StaticType) -> StaticType? {
        if a == b { return a }
        let scalars: [StaticType] = [.boolean, .number, .string, .null, .any, .primitive]
        if scalars.contains(a) && scalars.contains(b) && (a == .any || a == .primitive || b == .any || b == .primitive) {
            return .primitive
        }
        if (a == .null && b.isComparable) || (b == .null && a.isComparable) { return .primitive }
        return nil
    }
}

extension Expression {
    /// Whether this expression or any expression inside it satisfies `predicate`.
    func contains(where predicate: (Expression) -> Bool) -> Bool {
        if predicate(self) { return true }
        switch self {
        case .constant, .auth, .authUID, .now, .root, .data, .newData, .variable, .query: return false
        case .property(let a, let b), .arithmetic(_, let a, let b), .relational(_, let a, let b), .equals(let a, let b, _),
            .and(let a, let b),
            .or(let a, let b):
            return a.contains(where: predicate) || b.contains(where: predicate)
        case .length(let x), .not(let x), .negate(let x), .childAt(let x, _), .hasChildAt(let x, _), .hasChildrenAt(let x, _),
            .matches(let x, _):
            return x.contains(where: predicate)
        case .snapshot(let target, _, let arguments), .hasChildrenList(let target, let arguments), .string(let target, _, let arguments):
            return target.contains(where: predicate) || arguments.contains { $0.contains(where: predicate) }
        case .conditional(let a, let b, let c):
            return a.contains(where: predicate) || b.contains(where: predicate) || c.contains(where: predicate)
        }
    }

    /// Whether `parent()` is called anywhere in the expression: the only way a rule reads its
    /// location once its `data` and `newData` nodes are given.
    var callsParent: Bool {
        self.contains {
            if case .snapshot(_, .parent, _) = $0 { return true }
            return false
        }
    }

    /// Whether the expression reads a `$wildcard` variable.
    var readsVariables: Bool {
        self.contains {
            if case .variable = $0 { return true }
            return false
        }
    }
}
