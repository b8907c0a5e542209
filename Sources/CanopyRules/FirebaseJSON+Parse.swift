/// The lenient JSON of `database.rules.json` (the DocC article *The Rules Language*, *The document*): `//` and `/* */` comments, raw newlines
/// inside strings, trailing commas in objects and arrays; duplicate keys and newlines inside keys
/// are errors.
struct FirebaseJSONParser {
    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var line = 1
    private var column = 1
    private let maxDepth = 200

    init(_ text: String) { self.scalars = Array(text.unicodeScalars) }

    /// Parses one value followed only by whitespace and comments.
    /// - Complexity: O(*n*) in the length of the text.
    static func parse(_ text: String) throws(RulesError) -> FirebaseJSON {
        var parser = FirebaseJSONParser(text)
        let value = try parser.parseValue(depth: 0)
        try parser.skipTrivia()
        if parser.index < parser.scalars.count { throw parser.error("Unexpected '\(parser.scalars[parser.index])' after the document") }
        return value
    }

    private var position: SourcePosition { SourcePosition(line: self.line, column: self.column) }

    private func error(_ message: String, at position: SourcePosition? = nil) -> RulesError {
        let p = position ?? self.position
        return RulesError(message, line: p.line, column: p.column)
    }

    private var current: Unicode.Scalar? { self.index < self.scalars.count ? self.scalars[self.index] : nil }

    private mutating func advance() {
        if self.scalars[self.index] == "\n" {
            self.line += 1
            self.column = 1
        } else {
            self.column += 1
        }
        self.index += 1
    }

    private mutating func skipTrivia() throws(RulesError) {
        while let c = self.current {
            if c == " " || c == "\t" || c == "\n" || c == "\r" || c == "\u{FEFF}" {
                self.advance()
            } else if c == "/" && self.index + 1 < self.scalars.count && self.scalars[self.index + 1] == "/" {
                while let d = self.current, d != "\n" { self.advance() }
            } else if c == "/" && self.index + 1 < self.scalars.count && self.scalars[self.index + 1] == "*" {
                let start = self.position
                self.advance()
                self.advance()
                while true {
                    guard let d = self.current else { throw self.error("Unterminated comment", at: start) }
                    if d == "*" && self.index + 1 < self.scalars.count && self.scalars[self.index + 1] == "/" {
                        self.advance()
                        self.advance()
                        break
                    }
                    self.advance()
                }
            } else {
                return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(RulesError) -> FirebaseJSON {
        try self.skipTrivia()
        guard depth < self.maxDepth else { throw self.error("Rules nested too deeply") }
        let start = self.position
        guard let c = self.current else { throw self.error("Unexpected end of input") }
        switch c {
        case "{": return FirebaseJSON(kind: .object(try self.parseObject(depth: depth)), position: start)
        case "[": return FirebaseJSON(kind: .array(try self.parseArray(depth: depth)), position: start)
        case "\"":
            let (s, positions) = try self.parseString(allowNewlines: true)
            return FirebaseJSON(kind: .string(s, positions: positions), position: start)
        case "-", "0"..."9": return FirebaseJSON(kind: .number(try self.parseNumber()), position: start)
        default:
            var word = ""
            while let d = self.current, d.properties.isAlphabetic {
                word.unicodeScalars.append(d)
                self.advance()
            }
            switch word {
            case "true": return FirebaseJSON(kind: .bool(true), position: start)
            case "false": return FirebaseJSON(kind: .bool(false), position: start)
            case "null": return FirebaseJSON(kind: .null, position: start)
            default: throw self.error("Unexpected '\(word.isEmpty ? String(c) : word)'", at: start)
            }
        }
    }

    private mutating func parseObject(depth: Int) throws(RulesError) -> [FirebaseJSON.Member] {
        self.advance()  // {
        var members: [FirebaseJSON.Member] = []
        var seen: Set<String> = []
        while true {
            try self.skipTrivia()
            guard let c = self.current else { throw self.error("Unterminated object") }
            if c == "}" {
                self.advance()
                return members
            }
            guard c == "\"" else { throw self.error("Expected a quoted key or '}'") }
            let keyPosition = self.position
            let (key, _) = try self.parseString(allowNewlines: false)
            guard seen.insert(key).inserted else { throw self.error("Duplicate key '\(key)'", at: keyPosition) }
            try self.skipTrivia()
            guard self.current == ":" else { throw self.error("Expected ':' after key '\(key)'") }
            self.advance()
            let value = try self.parseValue(depth: depth + 1)
            members.append(FirebaseJSON.Member(key: key, keyPosition: keyPosition, value: value))
            try self.skipTrivia()
            if self.current == "," {
                self.advance()
            } else if self.current != "}" {
                throw self.error("Expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(RulesError) -> [FirebaseJSON] {
        self.advance()  // [
        var elements: [FirebaseJSON] = []
        while true {
            try self.skipTrivia()
            guard let c = self.current else { throw self.error("Unterminated array") }
            if c == "]" {
                self.advance()
                return elements
            }
            elements.append(try self.parseValue(depth: depth + 1))
            try self.skipTrivia()
            if self.current == "," {
                self.advance()
            } else if self.current != "]" {
                throw self.error("Expected ',' or ']'")
            }
        }
    }

    private mutating func parseString(allowNewlines: Bool) throws(RulesError) -> (String, [SourcePosition]) {
        let start = self.position
        self.advance()  // "
        var result = String.UnicodeScalarView()
        var positions: [SourcePosition] = []
        while true {
            guard let c = self.current else { throw self.error("Unterminated string", at: start) }
            let here = self.position
            if c == "\"" {
                positions.append(here)
                self.advance()
                return (String(result), positions)
            }
            if c == "\n" && !allowNewlines { throw self.error("Newline in a key") }
            if c.value < 0x20 && c != "\n" && c != "\r" && c != "\t" { throw self.error("Control character in a string") }
            self.advance()
            if c != "\\" {
                result.append(c)
                positions.append(here)
                continue
            }
            guard let e = self.current else { throw self.error("Unterminated string", at: start) }
            self.advance()
            let decoded: Unicode.Scalar
            switch e {
            case "\"": decoded = "\""
            case "\\": decoded = "\\"
            case "/": decoded = "/"
            case "b": decoded = "\u{8}"
            case "f": decoded = "\u{C}"
            case "n": decoded = "\n"
            case "r": decoded = "\r"
            case "t": decoded = "\t"
            case "u":
                var unit = try self.parseHex4()
                if (0xD800..<0xDC00).contains(unit), self.current == "\\", self.index + 1 < self.scalars.count,
                    self.scalars[self.index + 1] == "u"
                {
                    self.advance()
                    self.advance()
                    let low = try self.parseHex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw self.error("Invalid surrogate pair") }
                    unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let s = Unicode.Scalar(unit) else { throw self.error("Invalid \\u escape") }
                decoded = s
            default: throw self.error("Invalid escape '\\\(e)'", at: here)
            }
            result.append(decoded)
            positions.append(here)
        }
    }

    private mutating func parseHex4() throws(RulesError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let c = self.current, c.isASCII, let digit = UInt32(String(c), radix: 16) else {
                throw self.error("Invalid \\u escape")
            }
            value = value * 16 + digit
            self.advance()
        }
        return value
    }

    private mutating func parseNumber() throws(RulesError) -> Double {
        let start = self.position
        var text = ""
        while let c = self.current, c == "-" || c == "+" || c == "." || c == "e" || c == "E" || ("0"..."9").contains(c) {
            text.unicodeScalars.append(c)
            self.advance()
        }
        guard let value = Double(text), value.isFinite else { throw self.error("Invalid number '\(text)'", at: start) }
        return value
    }
}
