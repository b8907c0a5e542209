import Foundation

/// A regular expression of the rules subset (the DocC article *The Rules Language*, *Regular expressions*), compiled once at load.
final class CompiledRegex: @unchecked Sendable {  // NSRegularExpression is immutable and documented thread-safe
    let source: String
    private let regex: NSRegularExpression

    /// Checks the subset (only the `i` flag; `^`/`$` only at the very start/end; no empty
    /// alternative) and compiles the pattern.
    init(pattern: String, flags: String) throws(ExpressionError) {
        self.source = "/\(pattern)/\(flags)"
        guard flags.isEmpty || flags == "i" else {
            throw ExpressionError(message: "Unsupported regular expression flags '\(flags)' (only 'i' is allowed)", offset: 0)
        }
        try CompiledRegex.checkSubset(Array(pattern.unicodeScalars))
        do {
            self.regex = try NSRegularExpression(
                pattern: CompiledRegex.icuPattern(pattern), options: flags == "i" ? [.caseInsensitive] : [])
        } catch {
            throw ExpressionError(message: "Invalid regular expression \(self.source)", offset: 0)
        }
    }

    private static func checkSubset(_ p: [Unicode.Scalar]) throws(ExpressionError) {
        var i = 0
        var inClass = false
        var previous: Unicode.Scalar? = nil  // the last unescaped structural character outside classes
        while i < p.count {
            let c = p[i]
            if c == "\\" {
                i += 2
                previous = "a"
                continue
            }
            if inClass {
                if c == "]" { inClass = false }
                i += 1
                previous = "a"
                continue
            }
            switch c {
            case "[": inClass = true
            case "^" where i != 0:
                throw ExpressionError(message: "'^' is only allowed at the start of a regular expression", offset: 0)
            case "$" where i != p.count - 1:
                throw ExpressionError(message: "'$' is only allowed at the end of a regular expression", offset: 0)
            case "|":
                let atStart = previous == nil || previous == "(" || previous == "|" || previous == "^"
                let next = i + 1 < p.count ? p[i + 1] : nil
                let atEnd = next == nil || next == ")" || next == "|" || (next == "$" && i + 2 == p.count)
                if atStart || atEnd { throw ExpressionError(message: "Empty alternative in a regular expression", offset: 0) }
            default: break
            }
            previous = c
            i += 1
        }
    }

    /// The pattern in ICU syntax: a `{` or `}` that is not part of a `{n}`, `{n,}` or `{n,m}`
    /// quantifier is a literal in JavaScript (`/\{foo}/`, *The Rules Language*, *Regular expressions*) but an error in ICU, so it
    /// is escaped.
    static func icuPattern(_ pattern: String) -> String {
        let p = Array(pattern.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        var inClass = false
        while i < p.count {
            let c = p[i]
            if c == "\\" {
                out.append(c)
                if i + 1 < p.count { out.append(p[i + 1]) }
                i += 2
                continue
            }
            if inClass {
                if c == "]" { inClass = false }
                out.append(c)
                i += 1
                continue
            }
            if c == "[" { inClass = true }
            if c == "{" {
                var j = i + 1
                var digits = 0
                var commas = 0
                while j < p.count, ("0"..."9").contains(p[j]) || (p[j] == "," && commas == 0) {
                    if p[j] == "," { commas += 1 } else if commas == 0 { digits += 1 }
                    j += 1
                }
                if digits > 0, j < p.count, p[j] == "}" {
                    out.append(contentsOf: p[i...j])
                    i = j + 1
                    continue
                }
            }
            if c == "{" || c == "}" { out.append("\\") }
            out.append(c)
            i += 1
        }
        return String(out)
    }

    /// Whether the pattern occurs anywhere in `string` (a search, anchored only by `^`/`$`).
    /// - Complexity: that of the regular expression engine, at least O(*n*).
    func matches(_ string: String) -> Bool {
        self.regex.firstMatch(in: string, options: [], range: NSRange(string.startIndex..., in: string)) != nil
    }
}
