extension RulesDocument {
    /// Parses and compiles a rules document in Firebase's lenient JSON (comments, multi-line
    /// strings, trailing commas; duplicate keys refused), running every check of the DocC article *The Rules Language*, *Checks when rules are loaded*.
    ///
    /// - Throws: ``RulesError`` naming the line and column and, for a bad expression, the rule and
    ///   the expression; a document that throws must not replace the rules in force.
    /// - Complexity: O(*n*) in the length of the text.
    package init(parsing source: String) throws(RulesError) {
        self.source = source
        let json = try FirebaseJSONParser.parse(source)
        guard case .object(let members) = json.kind else {
            throw RulesError("Expected 'rules' property.", line: json.position.line, column: json.position.column)
        }
        guard let rules = members.first(where: { $0.key == "rules" }) else {
            throw RulesError("Expected 'rules' property.", line: json.position.line, column: json.position.column + 1)
        }
        if let extra = members.first(where: { $0.key != "rules" }) {
            throw RulesError(
                "Unexpected top-level property '\(extra.key)' (only 'rules' is allowed)", line: extra.keyPosition.line,
                column: extra.keyPosition.column)
        }
        self.root = try RuleTreeBuilder.node(rules.value, path: [], wildcards: [])
    }
}

/// Builds the rule tree from the document's JSON, compiling each rule.
enum RuleTreeBuilder {
    static func node(_ json: FirebaseJSON, path: [String], wildcards: [String]) throws(RulesError) -> RuleNode {
        let rulePath = "/" + path.joined(separator: "/")
        guard case .object(let members) = json.kind else {
            throw RulesError("The rules at \(rulePath) must be an object", line: json.position.line, column: json.position.column)
        }
        var rules: [RuleKind: CompiledRule] = [:]
        var indexOn: [String] = []
        var children: [String: RuleNode] = [:]
        var wildcardName: String?
        var wildcard: RuleNode?
        for member in members {
            let key = member.key
            let at = member.keyPosition
            if key.hasPrefix(".") {
                if let kind = RuleKind(rawValue: key) {
                    rules[kind] = try self.rule(kind, member.value, rulePath: rulePath, wildcards: wildcards)
                } else if key == ".indexOn" {
                    indexOn = try self.indexOn(member.value, rulePath: rulePath)
                } else {
                    throw RulesError("Unknown rule type '\(key)' at \(rulePath)", line: at.line, column: at.column)
                }
            } else if key.hasPrefix("$") {
                guard wildcardName == nil else {
                    throw RulesError(
                        "There can only be one wildcard child at \(rulePath) (found \(wildcardName!) and \(key))", line: at.line,
                        column: at.column)
                }
                guard key.count > 1, isValidName(key.dropFirst()) else {
                    throw RulesError("Invalid wildcard name '\(key)' at \(rulePath)", line: at.line, column: at.column)
                }
                guard !wildcards.contains(key) else {
                    throw RulesError("Wildcard \(key) at \(rulePath) is already bound by an ancestor", line: at.line, column: at.column)
                }
                wildcardName = key
                wildcard = try self.node(member.value, path: path + [key], wildcards: wildcards + [key])
            } else {
                guard isValidKey(key) else {
                    throw RulesError("Invalid key '\(key)' at \(rulePath)", line: at.line, column: at.column)
                }
                children[key] = try self.node(member.value, path: path + [key], wildcards: wildcards)
            }
        }
        return RuleNode(
            read: rules[.read], write: rules[.write], validate: rules[.validate], indexOn: indexOn, children: children,
            wildcardName: wildcardName, wildcard: wildcard)
    }

    private static func isValidName(_ name: Substring) -> Bool {
        name.unicodeScalars.allSatisfy {
            $0 == "_" || $0 == "$" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)))
        }
    }

    private static func isValidKey(_ key: String) -> Bool {
        !key.isEmpty && !key.unicodeScalars.contains { "./#$[]".unicodeScalars.contains($0) || $0.value < 0x20 || $0.value == 0x7F }
    }

    private static func rule(_ kind: RuleKind, _ json: FirebaseJSON, rulePath: String, wildcards: [String]) throws(RulesError)
        -> CompiledRule
    {
        switch json.kind {
        case .bool(let b):
            return CompiledRule(kind: kind, rulePath: rulePath, source: String(b), expression: .constant(.bool(b)), position: json.position)
        case .string(let source, let positions):
            do throws(ExpressionError) {
                let syntax = try Parser.parse(source)
                let expression = try Checker(kind: kind, wildcards: wildcards).compile(syntax)
                return CompiledRule(kind: kind, rulePath: rulePath, source: source, expression: expression, position: json.position)
            } catch {
                let at = positions[min(max(error.offset, 0), positions.count - 1)]
                throw RulesError(
                    "\(error.message) in \(kind.rawValue) at \(rulePath): \(source)", line: at.line, column: at.column, expression: source)
            }
        default:
            throw RulesError(
                "\(kind.rawValue) at \(rulePath) must be a boolean or a string expression", line: json.position.line,
                column: json.position.column)
        }
    }

    private static func indexOn(_ json: FirebaseJSON, rulePath: String) throws(RulesError) -> [String] {
        switch json.kind {
        case .string(let s, _): return [s]
        case .array(let elements):
            var result: [String] = []
            for element in elements {
                guard case .string(let s, _) = element.kind else {
                    throw RulesError(
                        ".indexOn at \(rulePath) must list strings", line: element.position.line, column: element.position.column)
                }
                result.append(s)
            }
            return result
        default:
            throw RulesError(
                ".indexOn at \(rulePath) must be a string or an array of strings", line: json.position.line, column: json.position.column)
        }
    }
}
