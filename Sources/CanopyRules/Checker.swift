import CanopyCore

/// The checks made when rules are loaded (the DocC article *The Rules Language*, *Checks when rules are loaded*), turning a ``Syntax`` tree into a compiled ``Expression``:
/// variables in scope (`newData` and `query` by rule kind, `$wildcards` on the rule's path),
/// known methods with their arities, argument types where they are known, regular expressions of
/// the supported subset, and a boolean result.
struct Checker {
    let kind: RuleKind
    /// The wildcard names (with `$`) bound on the rule's path, outermost first.
    let wildcards: [String]

    typealias Typed = (expression: Expression, type: StaticType)

    /// The compiled expression, or the first static error.
    /// - Complexity: O(*n*) in the size of the expression.
    func compile(_ syntax: Syntax) throws(ExpressionError) -> Expression {
        let typed = try self.check(syntax)
        guard typed.type.mayBeBoolean else {
            throw ExpressionError(message: "Expression must evaluate to a boolean, not a \(typed.type)", offset: syntax.offset)
        }
        return typed.expression
    }

    private func fail(_ message: String, _ syntax: Syntax) -> ExpressionError { ExpressionError(message: message, offset: syntax.offset) }

    func check(_ syntax: Syntax) throws(ExpressionError) -> Typed {
        switch syntax {
        case .null: return (.constant(.null), .null)
        case .bool(let b, _): return (.constant(.bool(b)), .boolean)
        case .number(let n, _): return (.constant(.number(n)), .number)
        case .string(let s, _): return (.constant(.string(s)), .string)
        case .regex: throw self.fail("A regular expression is only allowed as the argument of matches()", syntax)
        case .array: throw self.fail("An array is only allowed as the argument of hasChildren()", syntax)
        case .identifier(let name, _): return try self.identifier(name, syntax)
        case .member(let target, let name, _): return try self.member(try self.check(target), name, syntax)
        case .index(let target, let key, _):
            let base = try self.check(target)
            if base.type == .any {
                let k = try self.check(key)
                guard k.type.mayBeString || k.type == .number else {
                    throw self.fail("A property name must be a string, not a \(k.type)", key)
                }
                return (.property(base.expression, k.expression), .any)
            }
            guard case .string(let name, _) = key else {
                throw self.fail("Only a literal string may name a member of a \(base.type) with [ ]", key)
            }
            return try self.member(base, name, syntax)
        case .call(let callee, let arguments, _): return try self.call(callee, arguments, syntax)
        case .unary(let op, let operand, _):
            let x = try self.check(operand)
            switch op {
            case "!":
                guard x.type.mayBeBoolean else { throw self.fail("'!' needs a boolean, not a \(x.type)", syntax) }
                return (.not(x.expression), .boolean)
            case "-":
                guard x.type.mayBeNumber else { throw self.fail("'-' needs a number, not a \(x.type)", syntax) }
                return (.negate(x.expression), .number)
            default: throw self.fail("Unary '\(op)' is not supported", syntax)
            }
        case .binary(let op, let l, let r, _): return try self.binary(op, try self.check(l), try self.check(r), syntax)
        case .conditional(let c, let y, let n, _):
            let condition = try self.check(c)
            guard condition.type.mayBeBoolean else {
                throw self.fail("The condition of '?:' must be a boolean, not a \(condition.type)", c)
            }
            let yes = try self.check(y)
            let no = try self.check(n)
            guard let type = StaticType.join(yes.type, no.type) else {
                throw self.fail("The branches of '?:' have incompatible types \(yes.type) and \(no.type)", syntax)
            }
            return (.conditional(condition.expression, yes.expression, no.expression), type)
        }
    }

    private func identifier(_ name: String, _ syntax: Syntax) throws(ExpressionError) -> Typed {
        switch name {
        case "auth": return (.auth, .any)
        case "now": return (.now, .number)
        case "root": return (.root, .snapshot)
        case "data": return (.data, .snapshot)
        case "newData":
            guard self.kind != .read else { throw self.fail("newData is not available in .read rules", syntax) }
            return (.newData, .snapshot)
        case "query":
            guard self.kind == .read else { throw self.fail("query is only available in .read rules", syntax) }
            return (.constant(.null), .query)
        default:
            if name.hasPrefix("$") {
                guard let index = self.wildcards.lastIndex(of: name) else {
                    throw self.fail("Unknown variable '\(name)': no \(name) wildcard on this rule's path", syntax)
                }
                return (.variable(index), .string)
            }
            throw self.fail("Unknown variable '\(name)'", syntax)
        }
    }

    /// `target.name` without a call.
    private func member(_ base: Typed, _ name: String, _ syntax: Syntax) throws(ExpressionError) -> Typed {
        switch base.type {
        case .any:
            if name == "length" { return (.length(base.expression), .primitive) }
            if name == "uid", case .auth = base.expression { return (.authUID, .any) }
            return (.property(base.expression, .constant(.string(name))), .any)
        case .string, .primitive:
            if name == "length" { return (.length(base.expression), .number) }
            if StringMethod(rawValue: name) != nil { throw self.fail("String method \(name)() must be called", syntax) }
            throw self.fail("No such string property '\(name)'", syntax)
        case .snapshot:
            if SnapshotMethod(rawValue: name) != nil { throw self.fail("Snapshot method \(name)() must be called", syntax) }
            throw self.fail("No such snapshot method '\(name)'", syntax)
        case .query:
            guard let property = QueryProperty(rawValue: name) else { throw self.fail("No such query property '\(name)'", syntax) }
            switch property {
            case .orderByKey, .orderByPriority, .orderByValue: return (.query(property), .boolean)
            default: return (.query(property), .primitive)
            }
        default:
            throw self.fail("A \(base.type) has no property '\(name)'", syntax)
        }
    }

    private func call(_ callee: Syntax, _ arguments: [Syntax], _ syntax: Syntax) throws(ExpressionError) -> Typed {
        let targetSyntax: Syntax
        let name: String
        switch callee {
        case .member(let t, let n, _):
            targetSyntax = t
            name = n
        case .index(let t, .string(let n, _), _):
            targetSyntax = t
            name = n
        case .index:
            throw self.fail("A method must be named by a literal string", callee)
        default:
            throw self.fail("Only methods can be called", callee)
        }
        let target = try self.check(targetSyntax)
        switch target.type {
        case .snapshot:
            guard let method = SnapshotMethod(rawValue: name) else { throw self.fail("No such snapshot method '\(name)'", callee) }
            return try self.snapshotCall(target.expression, method, arguments, syntax)
        case .string, .primitive, .any:
            guard let method = StringMethod(rawValue: name) else { throw self.fail("No such string method '\(name)'", callee) }
            guard arguments.count == method.arity else {
                throw self.fail("\(name)() takes \(method.arity) argument\(method.arity == 1 ? "" : "s"), not \(arguments.count)", syntax)
            }
            if method == .matches {
                guard case .regex(let pattern, let flags, let at) = arguments[0] else {
                    throw self.fail("matches() needs a regular expression literal such as /^a/", arguments[0])
                }
                do {
                    return (.matches(target.expression, try CompiledRegex(pattern: pattern, flags: flags)), .boolean)
                } catch {
                    throw ExpressionError(message: error.message, offset: at)
                }
            }
            let args = try self.stringArguments(arguments, of: name)
            switch method {
            case .contains, .beginsWith, .endsWith: return (.string(target.expression, method, args), .boolean)
            default: return (.string(target.expression, method, args), .string)
            }
        default:
            throw self.fail("A \(target.type) has no method '\(name)'", callee)
        }
    }

    private func stringArguments(_ arguments: [Syntax], of name: String) throws(ExpressionError) -> [Expression] {
        var result: [Expression] = []
        for argument in arguments {
            let a = try self.check(argument)
            guard a.type.mayBeString else { throw self.fail("\(name)() needs a string argument, not a \(a.type)", argument) }
            result.append(a.expression)
        }
        return result
    }

    private func snapshotCall(_ target: Expression, _ method: SnapshotMethod, _ arguments: [Syntax], _ syntax: Syntax)
        throws(ExpressionError) -> Typed
    {
        let name = method.rawValue
        switch method {
        case .child, .hasChild:
            guard arguments.count == 1 else { throw self.fail("\(name)() takes 1 argument, not \(arguments.count)", syntax) }
            let args = try self.stringArguments(arguments, of: name)
            if let keys = Self.literalPath(args[0]) {
                return method == .child ? (.childAt(target, keys), .snapshot) : (.hasChildAt(target, keys), .boolean)
            }
            return (.snapshot(target, method, args), method == .child ? .snapshot : .boolean)
        case .hasChildren:
            if arguments.isEmpty { return (.snapshot(target, method, []), .boolean) }
            guard arguments.count == 1, case .array(let elements, _) = arguments[0] else {
                throw self.fail("hasChildren() takes no argument or one array of strings", syntax)
            }
            guard !elements.isEmpty else { throw self.fail("hasChildren() needs a non-empty array", arguments[0]) }
            let paths = try self.stringArguments(elements, of: name)
            let literal = paths.compactMap(Self.literalPath)
            if literal.count == paths.count { return (.hasChildrenAt(target, literal), .boolean) }
            return (.hasChildrenList(target, paths), .boolean)
        default:
            guard arguments.isEmpty else { throw self.fail("\(name)() takes no arguments", syntax) }
            switch method {
            case .parent: return (.snapshot(target, method, []), .snapshot)
            case .val, .getPriority: return (.snapshot(target, method, []), .primitive)
            default: return (.snapshot(target, method, []), .boolean)
            }
        }
    }

    /// The keys of a literal string path argument (split as `child()` splits at run time), or `nil`.
    static func literalPath(_ expression: Expression) -> [ChildKey]? {
        guard case .constant(.string(let path)) = expression else { return nil }
        return RuleDataSnapshot.keys(path)
    }

    private func binary(_ op: String, _ l: Typed, _ r: Typed, _ syntax: Syntax) throws(ExpressionError) -> Typed {
        switch op {
        case "&&", "||":
            guard l.type.mayBeBoolean && r.type.mayBeBoolean else {
                throw self.fail("'\(op)' needs booleans, not \(l.type) and \(r.type)", syntax)
            }
            return (op == "&&" ? .and(l.expression, r.expression) : .or(l.expression, r.expression), .boolean)
        case "==", "===", "!=", "!==":
            guard l.type.isComparable && r.type.isComparable else {
                throw self.fail("'\(op)' cannot compare a \(l.type.isComparable ? r.type : l.type)", syntax)
            }
            return (.equals(l.expression, r.expression, negated: op.hasPrefix("!")), .boolean)
        case "<", "<=", ">", ">=":
            let ordered: [StaticType] = [.number, .string, .any, .primitive]
            guard ordered.contains(l.type) && ordered.contains(r.type) else {
                throw self.fail("'\(op)' needs two numbers or two strings, not \(l.type) and \(r.type)", syntax)
            }
            if (l.type == .number && r.type == .string) || (l.type == .string && r.type == .number) {
                throw self.fail("'\(op)' cannot compare a \(l.type) with a \(r.type)", syntax)
            }
            return (.relational(RelationalOperator(rawValue: op)!, l.expression, r.expression), .boolean)
        case "+":
            guard (l.type.mayBeNumber || l.type.mayBeString) && (r.type.mayBeNumber || r.type.mayBeString) else {
                throw self.fail("'+' needs numbers or strings, not \(l.type) and \(r.type)", syntax)
            }
            let type: StaticType =
                (l.type == .string || r.type == .string) ? .string : (l.type == .number && r.type == .number ? .number : .primitive)
            return (.arithmetic(.add, l.expression, r.expression), type)
        default:
            guard let arithmetic = ArithmeticOperator(rawValue: op) else { throw self.fail("Operator '\(op)' is not supported", syntax) }
            guard l.type.mayBeNumber && r.type.mayBeNumber else {
                throw self.fail("'\(op)' needs numbers, not \(l.type) and \(r.type)", syntax)
            }
            return (.arithmetic(arithmetic, l.expression, r.expression), .number)
        }
    }
}
