extension BadInputMatrix {
    static let rulesTestNote = "Library and REST: rules test is the command line's offline rules playground."
    static let goodRules = Array(#"{"rules": {"users": {"$uid": {".write": "auth.uid == $uid"}}}}"#.utf8)

    /// `canopy rules test` with a rules file it cannot use, or data it cannot parse: a usage
    /// error naming where, and (as for every row) the database untouched.
    static var rulesTestRows: [MatrixRow] {
        [
            MatrixRow(
                name: "rules test with a rules file that is not valid JSON",
                cli: CLIStep(
                    arguments: ["rules", "test", "--rules", "broken.rules.json", "--read", "users"],
                    files: ["broken.rules.json": Array("{\"rules\": {\n  \".read\": \"true\n}}".utf8)], usesDatabase: false,
                    expect: .error(64, .exact("broken.rules.json:2:12: Unterminated string"))),
                note: rulesTestNote
            ),
            MatrixRow(
                name: "rules test with an expression naming an unknown variable",
                cli: CLIStep(
                    arguments: ["rules", "test", "--rules", "bad.rules.json", "--read", "users"],
                    files: ["bad.rules.json": Array("{\"rules\": {\n  \"users\": {\".read\": \"skies === 'blue'\"}\n}}".utf8)],
                    usesDatabase: false,
                    expect: .error(64, .exact("bad.rules.json:2:23: Unknown variable 'skies' in .read at /users: skies === 'blue'"))),
                note: rulesTestNote
            ),
            MatrixRow(
                name: "rules test with --data that is not JSON",
                cli: CLIStep(
                    arguments: ["rules", "test", "--rules", "good.rules.json", "--write", "users/ada", "--data", #"{"name": "Ada""#],
                    files: ["good.rules.json": goodRules], usesDatabase: false,
                    expect: .error(
                        64,
                        .exact(
                            "--data: Invalid JSON at line 1, column 15 (byte 14): unexpected end of input, expected ',' or '}' after object member"
                        ))),
                note: rulesTestNote
            ),
            MatrixRow(
                name: "rules test with an invalid key in --data",
                cli: CLIStep(
                    arguments: [
                        "rules", "test", "--rules", "good.rules.json", "--write", "users/ada", "--data", #"{"a$": 1}"#, "--uid", "ada",
                    ],
                    files: ["good.rules.json": goodRules], usesDatabase: false,
                    expect: .error(64, .exact("--data: " + dataKey("a$", "users.ada")))),
                note: rulesTestNote
            ),
        ]
    }
}
