/// A token of the rule expression language (a subset of JavaScript: the DocC article *The Rules Language*, *Syntax*).
struct Token: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case number(Double)
        case string(String)
        case identifier(String)
        case regex(pattern: String, flags: String)
        case punctuation(String)
        case end
    }

    var kind: Kind
    var offset: Int
}

/// Splits an expression into tokens. A `/` starts a regular expression where a value is
/// expected (JavaScript's rule), and divides elsewhere.
struct Lexer {
    private let scalars: [Unicode.Scalar]
    private var index = 0

    init(_ source: String) { self.scalars = Array(source.unicodeScalars) }

    /// All tokens, ending with `.end`.
    /// - Complexity: O(*n*) in the length of the expression.
    static func tokens(_ source: String) throws(ExpressionError) -> [Token] {
        var lexer = Lexer(source)
        var tokens: [Token] = []
        while true {
            let previous = tokens.last
            let token = try lexer.next(valueExpected: previous.map(Lexer.expectsValueAfter) ?? true)
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private static func expectsValueAfter(_ token: Token) -> Bool {
        switch token.kind {
        case .number, .string, .identifier, .regex: return false
        case .punctuation(let p): return p != ")" && p != "]"
        case .end: return false
        }
    }

    private static let punctuators = [
        "===", "!==", "==", "!=", "<=", ">=", "&&", "||", "**", "(", ")", "[", "]", ".", ",", "?", ":", "!", "-", "+", "*", "/", "%", "<",
        ">", "=", ";", "{", "}", "&", "|", "^", "~",
    ]

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        self.index + offset < self.scalars.count ? self.scalars[self.index + offset] : nil
    }

    private static func isIdentifierStart(_ c: Unicode.Scalar) -> Bool { c == "_" || c == "$" || (c.isASCII && c.properties.isAlphabetic) }
    private static func isIdentifierPart(_ c: Unicode.Scalar) -> Bool { isIdentifierStart(c) || ("0"..."9").contains(c) }

    private mutating func next(valueExpected: Bool) throws(ExpressionError) -> Token {
        while let c = self.peek(), c == " " || c == "\t" || c == "\n" || c == "\r" { self.index += 1 }
        let start = self.index
        guard let c = self.peek() else { return Token(kind: .end, offset: start) }
        if Lexer.isIdentifierStart(c) {
            var name = String.UnicodeScalarView()
            while let d = self.peek(), Lexer.isIdentifierPart(d) {
                name.append(d)
                self.index += 1
            }
            return Token(kind: .identifier(String(name)), offset: start)
        }
        if ("0"..."9").contains(c) || (c == "." && self.peek(1).map { ("0"..."9").contains($0) } == true) {
            return Token(kind: .number(try self.number()), offset: start)
        }
        if c == "'" || c == "\"" { return Token(kind: .string(try self.string(quote: c)), offset: start) }
        if c == "/" && valueExpected { return try self.regex() }
        for p in Lexer.punctuators where self.matches(p) {
            self.index += p.unicodeScalars.count
            return Token(kind: .punctuation(p), offset: start)
        }
        throw ExpressionError(message: "Unexpected character '\(c)'", offset: start)
    }

    private func matches(_ p: String) -> Bool {
        var i = 0
        for s in p.unicodeScalars {
            guard self.peek(i) == s else { return false }
            i += 1
        }
        return true
    }

    private mutating func number() throws(ExpressionError) -> Double {
        let start = self.index
        var text = ""
        while let c = self.peek(), ("0"..."9").contains(c) || c == "." {
            text.unicodeScalars.append(c)
            self.index += 1
        }
        if let e = self.peek(), e == "e" || e == "E" {
            text.unicodeScalars.append(e)
            self.index += 1
            if let s = self.peek(), s == "+" || s == "-" {
                text.unicodeScalars.append(s)
                self.index += 1
            }
            while let c = self.peek(), ("0"..."9").contains(c) {
                text.unicodeScalars.append(c)
                self.index += 1
            }
        }
        if let c = self.peek(), Lexer.isIdentifierStart(c) { throw ExpressionError(message: "Invalid number", offset: start) }
        guard let value = Double(text) else { throw ExpressionError(message: "Invalid number '\(text)'", offset: start) }
        return value
    }

    private mutating func string(quote: Unicode.Scalar) throws(ExpressionError) -> String {
        let start = self.index
        self.index += 1
        var result = String.UnicodeScalarView()
        while true {
            guard let c = self.peek() else { throw ExpressionError(message: "Unterminated string", offset: start) }
            self.index += 1
            if c == quote { return String(result) }
            guard c == "\\" else {
                result.append(c)
                continue
            }
            guard let e = self.peek() else { throw ExpressionError(message: "Unterminated string", offset: start) }
            self.index += 1
            switch e {
            case "n": result.append("\n")
            case "t": result.append("\t")
            case "r": result.append("\r")
            case "b": result.append("\u{8}")
            case "f": result.append("\u{C}")
            case "v": result.append("\u{B}")
            case "0": result.append("\u{0}")
            case "u", "x":
                let count = e == "u" ? 4 : 2
                var value: UInt32 = 0
                for _ in 0..<count {
                    guard let h = self.peek(), h.isASCII, let d = UInt32(String(h), radix: 16) else {
                        throw ExpressionError(message: "Invalid escape", offset: self.index)
                    }
                    value = value * 16 + d
                    self.index += 1
                }
                guard let s = Unicode.Scalar(value) else { throw ExpressionError(message: "Invalid escape", offset: self.index) }
                result.append(s)
            default: result.append(e)
            }
        }
    }

    private mutating func regex() throws(ExpressionError) -> Token {
        let start = self.index
        self.index += 1
        var pattern = String.UnicodeScalarView()
        var inClass = false
        while true {
            guard let c = self.peek(), c != "\n" else { throw ExpressionError(message: "Unterminated regular expression", offset: start) }
            self.index += 1
            if c == "/" && !inClass { break }
            pattern.append(c)
            if c == "\\" {
                guard let e = self.peek() else { throw ExpressionError(message: "Unterminated regular expression", offset: start) }
                pattern.append(e)
                self.index += 1
            } else if c == "[" {
                inClass = true
            } else if c == "]" {
                inClass = false
            }
        }
        var flags = ""
        while let c = self.peek(), Lexer.isIdentifierPart(c) {
            flags.unicodeScalars.append(c)
            self.index += 1
        }
        return Token(kind: .regex(pattern: String(pattern), flags: flags), offset: start)
    }
}
