/// Parses one rule expression with JavaScript's precedence and associativity (the DocC article *The Rules Language*, *Syntax*):
/// `?:` < `||` < `&&` < equality < relational < additive < multiplicative < unary < member/call.
/// Statements, assignment, `**`, bitwise operators, object and function literals are refused.
struct Parser {
    private let tokens: [Token]
    private var index = 0
    private var depth = 0
    private static let maxDepth = 256

    private init(_ tokens: [Token]) { self.tokens = tokens }

    /// The parse tree of `source`, which must be exactly one expression.
    /// - Complexity: O(*n*) in the length of the expression.
    static func parse(_ source: String) throws(ExpressionError) -> Syntax {
        var parser = Parser(try Lexer.tokens(source))
        if case .end = parser.current.kind { throw ExpressionError(message: "Empty expression", offset: 0) }
        let syntax = try parser.conditional()
        guard case .end = parser.current.kind else {
            throw ExpressionError(message: parser.unexpected(parser.current), offset: parser.current.offset)
        }
        return syntax
    }

    private var current: Token { self.tokens[self.index] }

    private func isPunctuation(_ p: String) -> Bool { self.current.kind == .punctuation(p) }

    private mutating func take(_ p: String) -> Bool {
        guard self.isPunctuation(p) else { return false }
        self.index += 1
        return true
    }

    private mutating func expect(_ p: String) throws(ExpressionError) {
        guard self.take(p) else {
            throw ExpressionError(message: "Expected '\(p)' but found \(self.describe(self.current))", offset: self.current.offset)
        }
    }

    private func describe(_ token: Token) -> String {
        switch token.kind {
        case .end: return "the end of the expression"
        case .punctuation(let p): return "'\(p)'"
        case .identifier(let name): return "'\(name)'"
        case .number(let n): return "number \(n)"
        case .string: return "a string"
        case .regex: return "a regular expression"
        }
    }

    private func unexpected(_ token: Token) -> String {
        switch token.kind {
        case .punctuation("="): return "Assignment is not allowed in rules"
        case .punctuation(";"): return "A rule must be a single expression (no ';')"
        case .punctuation("**"): return "The '**' operator is not supported"
        case .punctuation(let p) where ["&", "|", "^", "~"].contains(p): return "Bitwise operator '\(p)' is not supported"
        case .identifier(let name) where ["in", "instanceof"].contains(name): return "The '\(name)' operator is not supported"
        case .end: return "The expression ends too early"
        default: return "Unexpected \(self.describe(token))"
        }
    }

    private mutating func nested<T>(_ body: (inout Parser) throws(ExpressionError) -> T) throws(ExpressionError) -> T {
        self.depth += 1
        defer { self.depth -= 1 }
        guard self.depth < Parser.maxDepth else {
            throw ExpressionError(message: "Expression nested too deeply", offset: self.current.offset)
        }
        return try body(&self)
    }

    private mutating func conditional() throws(ExpressionError) -> Syntax {
        try self.nested { (p: inout Parser) throws(ExpressionError) -> Syntax in
            let condition = try p.binary(level: 0)
            let at = p.current.offset
            guard p.take("?") else { return condition }
            let yes = try p.conditional()
            try p.expect(":")
            let no = try p.conditional()
            return .conditional(condition, yes, no, at: at)
        }
    }

    private static let levels: [[String]] = [
        ["||"], ["&&"], ["==", "!=", "===", "!=="], ["<", "<=", ">", ">="], ["+", "-"], ["*", "/", "%"],
    ]

    private mutating func binary(level: Int) throws(ExpressionError) -> Syntax {
        guard level < Parser.levels.count else { return try self.unary() }
        var left = try self.binary(level: level + 1)
        var chain = 0
        while case .punctuation(let op) = self.current.kind, Parser.levels[level].contains(op) {
            let at = self.current.offset
            self.index += 1
            // A chain `a && b && …` nests to the left: count it against the depth limit.
            chain += 1
            guard self.depth + chain < Parser.maxDepth else { throw ExpressionError(message: "Expression nested too deeply", offset: at) }
            let right = try self.binary(level: level + 1)
            left = .binary(op, left, right, at: at)
        }
        return left
    }

    private mutating func unary() throws(ExpressionError) -> Syntax {
        let at = self.current.offset
        for op in ["!", "-", "+"] where self.take(op) {
            let operand = try self.nested { (p: inout Parser) throws(ExpressionError) in try p.unary() }
            return .unary(op, operand, at: at)
        }
        if case .identifier(let name) = self.current.kind, ["typeof", "void", "delete", "new"].contains(name) {
            throw ExpressionError(message: "'\(name)' is not supported in rules", offset: at)
        }
        return try self.postfix()
    }

    private mutating func postfix() throws(ExpressionError) -> Syntax {
        var expression = try self.primary()
        var chain = 0
        while true {
            let at = self.current.offset
            chain += 1
            guard self.depth + chain < Parser.maxDepth else { throw ExpressionError(message: "Expression nested too deeply", offset: at) }
            if self.take(".") {
                guard case .identifier(let name) = self.current.kind else {
                    throw ExpressionError(message: "Expected a property name after '.'", offset: self.current.offset)
                }
                self.index += 1
                expression = .member(expression, name, at: at)
            } else if self.take("[") {
                let key = try self.conditional()
                try self.expect("]")
                expression = .index(expression, key, at: at)
            } else if self.take("(") {
                var arguments: [Syntax] = []
                if !self.take(")") {
                    repeat { arguments.append(try self.conditional()) } while self.take(",")
                    try self.expect(")")
                }
                expression = .call(expression, arguments, at: at)
            } else {
                return expression
            }
        }
    }

    private mutating func primary() throws(ExpressionError) -> Syntax {
        let token = self.current
        let at = token.offset
        switch token.kind {
        case .number(let n):
            self.index += 1
            return .number(n, at: at)
        case .string(let s):
            self.index += 1
            return .string(s, at: at)
        case .regex(let pattern, let flags):
            self.index += 1
            return .regex(pattern: pattern, flags: flags, at: at)
        case .identifier(let name):
            self.index += 1
            switch name {
            case "true": return .bool(true, at: at)
            case "false": return .bool(false, at: at)
            case "null": return .null(at: at)
            case "var", "let", "const", "function", "return", "if", "this", "undefined":
                throw ExpressionError(message: "'\(name)' is not supported in rules", offset: at)
            default: return .identifier(name, at: at)
            }
        case .punctuation("("):
            self.index += 1
            let inner = try self.conditional()
            try self.expect(")")
            return inner
        case .punctuation("["):
            self.index += 1
            var elements: [Syntax] = []
            if !self.take("]") {
                repeat { elements.append(try self.conditional()) } while self.take(",")
                try self.expect("]")
            }
            return .array(elements, at: at)
        case .punctuation("{"):
            throw ExpressionError(message: "Object literals are not supported in rules", offset: at)
        default:
            throw ExpressionError(message: self.unexpected(token), offset: at)
        }
    }
}
