import CanopyRules

/// A rules file (`database.rules.json`), read and compiled before anything uses it.
struct RulesFile {
    /// The text as written, comments included (what `rules set` sends).
    var bytes: [UInt8]
    var document: RulesDocument

    /// Reads `file` (`-`: stdin) and compiles it; a bad document is a usage error on one line,
    /// `FILE:LINE:COLUMN: message`, the message naming the expression at fault.
    init(_ file: String) throws(CLIError) {
        let name = file == "-" ? "<stdin>" : file
        self.bytes = try readInput(file)
        guard let text = String(validating: self.bytes, as: UTF8.self) else { throw .usage("\(name): the rules file is not UTF-8 text.") }
        do {
            self.document = try RulesDocument(parsing: text)
        } catch {
            throw .usage("\(name):\(error.line):\(error.column): \(oneLine(error.message))")
        }
    }
}

/// `text` on one line: every run of whitespace that holds a line break becomes one space (a rule
/// expression may span lines).
func oneLine(_ text: String) -> String {
    guard text.contains(where: \.isNewline) else { return text }
    var out = ""
    var pending = ""
    for character in text {
        if character.isWhitespace {
            pending.append(character)
            continue
        }
        if !pending.isEmpty {
            out += pending.contains(where: \.isNewline) ? " " : pending
            pending = ""
        }
        out.append(character)
    }
    return out + (pending.contains(where: \.isNewline) ? " " : pending)
}
