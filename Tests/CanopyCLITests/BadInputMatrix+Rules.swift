/// Rules mistakes over REST: each is refused with 400 naming the line, column and (for an
/// expression) the expression, and leaves the data and the rules in force as they were.
extension BadInputMatrix {
    static var rulesRows: [MatrixRow] {
        let cases: [(name: String, document: String, message: String)] = [
            ("not JSON", #"{"rules": "#, "Invalid rules at line 1, column 11: "),
            ("no rules member", #"{"rulez": {}}"#, "Invalid rules at line 1, column 2: Expected 'rules' property."),
            (
                "an expression cut short", #"{"rules": {".read": "auth.uid =="}}"#,
                "Invalid rules at line 1, column 33: The expression ends too early"
            ),
            ("an unknown variable", #"{"rules": {".write": "user != null"}}"#, "Invalid rules at line 1, column "),
            ("a rule of the wrong type", #"{"rules": {".read": 1}}"#, "Invalid rules at line 1, column "),
            ("assignment in a rule", #"{"rules": {".write": "a = 1"}}"#, "Invalid rules at line 1, column "),
            ("two wildcards side by side", #"{"rules": {"$a": {}, "$b": {}}}"#, "Invalid rules at line 1, column "),
        ]
        return cases.map { row in
            MatrixRow(
                name: "rules: \(row.name)",
                rest: RESTStep(
                    method: "PUT", target: "/.settings/rules.json", body: Array(row.document.utf8),
                    expect: .error(400, .prefix(row.message))))
        }
    }
}
