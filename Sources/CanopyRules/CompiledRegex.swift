import Foundation

/// A regular expression of the rules subset (spec §3.6), compiled once at load.
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
            self.regex = try NSRegularExpression(pattern: pattern, options: flags == "i" ? [.caseInsensitive] : [])
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

    /// Whether the pattern occurs anywhere in `string` (a search, anchored only by `^`/`$`).
    /// - Complexity: that of the regular expression engine, at least O(*n*).
    func matches(_ string: String) -> Bool {
        self.regex.firstMatch(in: string, options: [], range: NSRange(string.startIndex..., in: string)) != nil
    }
}
