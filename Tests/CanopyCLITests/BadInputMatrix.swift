import Canopy
import CanopyCore
import CanopyTestSupport
import Foundation
import Testing

/// Bad input through the three entry points — the library, the `canopy` command line, the REST
/// server (`canopy serve`) — gets a clear error and loses nothing.
///
/// Each row is one mistake; for each entry point where the mistake can be made it states the
/// exact answer (library `DatabaseError` code and message, CLI exit status and stderr line, REST
/// status and `{"error": …}` text). Each entry point starts from the same seed tree; after every
/// row the whole tree is read back and compared with the seed, then a good write to `/probe` must
/// succeed (the next row's read-back checks it landed).
@Suite("Bad-input matrix")
struct BadInputMatrix {
    // MARK: - The seed and the messages

    static let seed =
        #"{"list":{"-a":"x","-b":"y"},"n":7,"users":{"ada":{".priority":1,"name":"Ada","score":36},"bob":{"name":"Bob","score":12}}}"#

    static let keyRules = ##"Keys must be non-empty strings and can't contain ".", "#", "$", "/", "[", or "]""##
    static let priorityRules = "must be a valid Firebase priority (a string, finite number, server value, or null)."
    static let restInvalidJSON = "Invalid data; couldn't parse JSON object, array, or value."

    /// The library's message for an invalid `child(_:)` path.
    static func libraryPath(_ path: String) -> String {
        ##"child failed: path argument was an invalid path = "\##(path)". Paths must be non-empty strings and can't contain ".", "#", "$", "[", or "]""##
    }

    /// The CLI's message for an invalid PATH argument.
    static func cliPath(_ path: String) -> String {
        ##"Invalid path "\##(path)": keys must be non-empty and can't contain ".", "#", "$", "[", "]" or control characters."##
    }

    /// The server's message for an invalid location.
    static func restPath(_ path: String) -> String {
        ##"Invalid path "\##(path)": keys must be non-empty and can't contain ".", "#", "$", "[", "]" or control characters."##
    }

    /// The message for an invalid key inside written data.
    static func dataKey(_ key: String, _ property: String, function: String = "set") -> String {
        "\(function) failed: value argument contains an invalid key (\(key)) at /\(property.replacingOccurrences(of: ".", with: "/")). \(keyRules)"
    }

    /// How the CLI shows a message: one line, control characters as `\u00XX`.
    static func escaped(_ text: String) -> String {
        text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? String(format: "\\u%04X", $0.value) : String($0) }.joined()
    }

    static let hugeString = String(repeating: "x", count: 10_485_761)
    static let hugeBody = Array(#"{"s": ""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: 10_485_761) + Array(#""}"#.utf8)
    static let deepPath = (0..<33).map { "d\($0)" }.joined(separator: "/")
    static let deepProperty = (0..<33).map { "d\($0)" }.joined(separator: "/")
    static let longKey = String(repeating: "k", count: 800)

    // MARK: - The rows

    static let forbidden: [(name: String, char: String, url: String)] = [
        ("dot", ".", "."), ("hash", "#", "%23"), ("dollar", "$", "$"), ("open bracket", "[", "%5B"), ("close bracket", "]", "%5D"),
        ("control U+0001", "\u{1}", "%01"), ("newline", "\n", "%0A"), ("control U+001F", "\u{1F}", "%1F"),
        ("control U+007F", "\u{7F}", "%7F"),
    ]

    static var keyRows: [MatrixRow] {
        var rows: [MatrixRow] = []
        for (name, char, url) in forbidden {
            let key = "a\(char)b"
            let jsonKey = JSONWriter.string(.string(key))
            rows.append(
                MatrixRow(
                    name: "key with \(name) in the path",
                    library: LibraryStep(
                        run: { db in try await db.reference(withPath: "users").child(key).setValue(1) },
                        expect: .error(.invalidPath, .exact(libraryPath(key)))),
                    cli: CLIStep(arguments: ["set", "users/\(key)", "1"], expect: .error(64, .exact(escaped(cliPath("users/\(key)"))))),
                    rest: RESTStep(
                        method: "PUT", target: "/users/a\(url)b.json", body: Array("1".utf8),
                        expect: .error(400, .exact(restPath("/users/\(key)"))))
                )
            )
            rows.append(
                MatrixRow(
                    name: "key with \(name) in the data",
                    library: LibraryStep(
                        run: { db in try await db.reference(withPath: "users/ada").setValue(["ok": 1, key: 2]) },
                        expect: .error(.invalidKey, .exact(dataKey(key, "users.ada")))),
                    cli: CLIStep(
                        arguments: ["set", "users/ada", "{\"ok\": 1, \(jsonKey): 2}"],
                        expect: .error(64, .exact(escaped(dataKey(key, "users.ada"))))),
                    rest: RESTStep(
                        method: "PUT", target: "/users/ada.json", body: Array("{\"ok\": 1, \(jsonKey): 2}".utf8),
                        expect: .error(400, .exact(dataKey(key, "users.ada"))))
                )
            )
        }
        rows.append(
            MatrixRow(
                name: "empty key in the data",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: "users/ada").setValue(["": 1]) },
                    expect: .error(.invalidKey, .exact(dataKey("", "users.ada")))),
                cli: CLIStep(arguments: ["set", "users/ada", #"{"": 1}"#], expect: .error(64, .exact(dataKey("", "users.ada")))),
                rest: RESTStep(
                    method: "PUT", target: "/users/ada.json", body: Array(#"{"": 1}"#.utf8),
                    expect: .error(400, .exact(dataKey("", "users.ada"))))
            )
        )
        rows.append(
            MatrixRow(
                name: "empty path (child(\"\"), an empty PATH argument)",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: "users").child("").setValue(1) },
                    expect: .error(.invalidPath, .exact(libraryPath("")))),
                cli: CLIStep(arguments: ["set", "", "1"], expect: .error(64, .exact(#"Invalid path "": empty (use / for the root)."#))),
                note: "REST: /.json is the root by definition."
            )
        )
        return rows
    }

    static var pathRows: [MatrixRow] {
        [
            MatrixRow(
                name: "doubled slashes are collapsed, as Firebase does",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: "probe//a/").setValue(1) }, expect: .accepted(probe: #"{"a":1}"#)),
                cli: CLIStep(arguments: ["set", "probe//a/", "1"], expect: .accepted(stdout: "", probe: #"{"a":1}"#)),
                rest: RESTStep(
                    method: "PUT", target: "//probe//a/.json", body: Array("1".utf8),
                    expect: .accepted(status: 200, body: "1", probe: #"{"a":1}"#))
            ),
            MatrixRow(
                name: "path deeper than 32 levels",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: deepPath).setValue(1) },
                    expect: .error(
                        .invalidValue,
                        .exact(
                            "set failed: value argument path specified exceeds the maximum depth that can be written (32) or object contains a cycle at /\(deepProperty)"
                        ))),
                cli: CLIStep(
                    arguments: ["set", deepPath, "1"],
                    expect: .error(
                        64,
                        .exact(
                            "set failed: value argument path specified exceeds the maximum depth that can be written (32) or object contains a cycle at /\(deepProperty)"
                        ))),
                rest: RESTStep(
                    method: "PUT", target: "/\(deepPath).json", body: Array("1".utf8),
                    expect: .error(400, .exact("Invalid path \"/\(deepPath)\": deeper than 32 levels.")))
            ),
            MatrixRow(
                name: "data nested deeper than 32 levels",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: "users/ada").importJSON(Array(Self.nested(31).utf8)) },
                    expect: .error(
                        .invalidValue,
                        .prefix("import failed: value argument path specified exceeds the maximum depth that can be written (32)"))),
                cli: CLIStep(
                    arguments: ["set", "users/ada", Self.nested(31)],
                    expect: .error(
                        64, .prefix("set failed: value argument path specified exceeds the maximum depth that can be written (32)"))),
                rest: RESTStep(
                    method: "PUT", target: "/users/ada.json", body: Array(Self.nested(31).utf8),
                    expect: .error(
                        400, .prefix("set failed: value argument path specified exceeds the maximum depth that can be written (32)")))
            ),
            MatrixRow(
                name: "path longer than 768 bytes",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: "users").child(longKey).setValue(1) },
                    expect: .error(.invalidValue, .exact("set failed: value argument has a key path longer than 768 bytes (807)."))),
                cli: CLIStep(
                    arguments: ["set", "users/\(longKey)", "1"],
                    expect: .error(64, .exact("set failed: value argument has a key path longer than 768 bytes (807)."))),
                rest: RESTStep(
                    method: "PUT", target: "/users/\(longKey).json", body: Array("1".utf8),
                    expect: .error(400, .exact("Invalid path: longer than 768 bytes.")))
            ),
            MatrixRow(
                name: "writing under .info",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: ".info/x").setValue(1) },
                    expect: .error(.invalidPath, .exact("set failed = Can't modify data under /.info/"))),
                cli: CLIStep(
                    arguments: ["set", ".info/x", "1"], expect: .error(64, .exact(#"Invalid path ".info/x": .info is not stored data."#))),
                rest: RESTStep(
                    method: "PUT", target: "/.info/x.json", body: Array("1".utf8),
                    expect: .error(400, .exact("Can't modify data under /.info/")))
            ),
        ]
    }

    /// A JSON object nested `levels` deep (below the location it is written to).
    static func nested(_ levels: Int) -> String {
        String(repeating: #"{"k": "#, count: levels) + "1" + String(repeating: "}", count: levels)
    }

    static func jsonRow(
        _ name: String, _ body: [UInt8], file: Bool = false, library: LibraryStep.Expect, cli: CLIStep.Expect, rest: RESTStep.Expect,
        note: String = ""
    ) -> MatrixRow {
        MatrixRow(
            name: name,
            library: LibraryStep(run: { db in try await db.reference(withPath: "users/ada").importJSON(body) }, expect: library),
            cli: file
                ? CLIStep(arguments: ["set", "users/ada", "--file", "@body"], files: ["body": body], expect: cli)
                : CLIStep(arguments: ["set", "users/ada", String(decoding: body, as: UTF8.self)], expect: cli),
            rest: RESTStep(method: "PUT", target: "/users/ada.json", body: body, expect: rest),
            note: note
        )
    }

    static func invalidJSON(_ detail: String) -> (LibraryStep.Expect, CLIStep.Expect, RESTStep.Expect) {
        (.error(.invalidJSON, .exact(detail)), .error(64, .exact(detail)), .error(400, .exact("\(restInvalidJSON) \(detail)")))
    }

    static var jsonRows: [MatrixRow] {
        var rows: [MatrixRow] = []
        func add(_ name: String, _ text: String, _ detail: String, file: Bool = false) {
            let (l, c, r) = invalidJSON(detail)
            rows.append(jsonRow(name, Array(text.utf8), file: file, library: l, cli: c, rest: r))
        }
        add("invalid JSON (a bare word)", "hello", "Invalid JSON at line 1, column 1 (byte 0): unexpected character 'h', expected a value")
        add(
            "invalid JSON (missing value)", #"{"a": }"#,
            "Invalid JSON at line 1, column 7 (byte 6): unexpected character '}', expected a value")
        add("invalid JSON (trailing comma)", #"{"a": 1,}"#, "Invalid JSON at line 1, column 9 (byte 8): trailing comma before '}'")
        add(
            "truncated JSON (object)", #"{"name": "Ada", "score": [1, 2"#,
            "Invalid JSON at line 1, column 31 (byte 30): unexpected end of input, expected ',' or ']' after array element")
        add("truncated JSON (string)", #""Ad"#, "Invalid JSON at line 1, column 4 (byte 3): unexpected end of input inside string")
        add(
            "JSON with trailing data", #"{"a": 1} x"#,
            "Invalid JSON at line 1, column 10 (byte 9): unexpected character 'x' after the JSON value")
        add("NaN as a JSON number", "NaN", "Invalid JSON at line 1, column 1 (byte 0): unexpected character 'N', expected a value")
        add(
            "Infinity as a JSON number", "Infinity", "Invalid JSON at line 1, column 1 (byte 0): unexpected character 'I', expected a value"
        )
        add(
            "-Infinity as a JSON number", "-Infinity",
            "Invalid JSON at line 1, column 2 (byte 1): expected a digit after '-', found character 'I'", file: true)
        add("number out of range (1e400)", #"{"x": 1e400}"#, "Invalid JSON at line 1, column 7 (byte 6): number out of range: 1e400")
        add("number out of range (-1e400)", #"{"x": -1e400}"#, "Invalid JSON at line 1, column 7 (byte 6): number out of range: -1e400")
        let (l, c, r) = invalidJSON("Invalid JSON at line 1, column 12 (byte 11): invalid UTF-8 byte 0xFF")
        rows.append(
            jsonRow(
                "invalid UTF-8 in a string value", Array(#"{"name": "#.utf8) + [0x22, 0x41, 0xFF, 0xFE, 0x22] + [0x7D], file: true,
                library: l, cli: c, rest: r))
        let (l2, c2, r2) = invalidJSON("Invalid JSON at line 1, column 4 (byte 3): invalid UTF-8 byte 0x28")
        rows.append(
            jsonRow("invalid UTF-8 in a key", [0x7B, 0x22, 0xC3, 0x28, 0x22, 0x3A, 0x31, 0x7D], file: true, library: l2, cli: c2, rest: r2))
        rows.append(
            MatrixRow(
                name: "empty body",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: "users/ada").importJSON([UInt8]()) },
                    expect: .error(.invalidJSON, .exact("Invalid JSON at line 1, column 1 (byte 0): empty input"))),
                cli: CLIStep(
                    arguments: ["set", "users/ada", "--file", "@body"], files: ["body": []],
                    expect: .error(64, .exact("The JSON value is empty (write null to remove a value)."))),
                rest: RESTStep(method: "PUT", target: "/users/ada.json", body: [], expect: .error(400, .exact(restInvalidJSON)))
            )
        )
        rows.append(
            MatrixRow(
                name: "a 30-digit integer is stored as a double, as Firebase does",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: "probe").importJSON(Array("123456789012345678901234567890".utf8)) },
                    expect: .accepted(probe: "1.2345678901234568e+29")),
                cli: CLIStep(
                    arguments: ["set", "probe", "123456789012345678901234567890"],
                    expect: .accepted(stdout: "", probe: "1.2345678901234568e+29")),
                rest: RESTStep(
                    method: "PUT", target: "/probe.json", body: Array("123456789012345678901234567890".utf8),
                    expect: .accepted(status: 200, body: "1.2345678901234568e+29", probe: "1.2345678901234568e+29"))
            )
        )
        rows.append(
            MatrixRow(
                name: "a negative number is a value, not an option",
                library: LibraryStep(run: { db in try await db.reference(withPath: "probe").setValue(-5) }, expect: .accepted(probe: "-5")),
                cli: CLIStep(arguments: ["set", "probe", "-5"], expect: .accepted(stdout: "", probe: "-5")),
                rest: RESTStep(
                    method: "PUT", target: "/probe.json", body: Array("-5".utf8), expect: .accepted(status: 200, body: "-5", probe: "-5"))
            )
        )
        rows.append(
            MatrixRow(
                name: "a negative query bound",
                library: LibraryStep(
                    run: { db in
                        let result = try await db.reference(withPath: "users").queryOrdered(byChild: "score").queryStarting(atValue: -5)
                            .queryLimited(toFirst: 1).getData()
                        if result.jsonString() != #"{"bob":{"name":"Bob","score":12}}"# {
                            throw ToolFailure("unexpected result \(result.jsonString())")
                        }
                    },
                    expect: .accepted(probe: nil)
                ),
                cli: CLIStep(
                    arguments: ["get", "users", "--order-by-child", "score", "--start-at", "-5", "--limit-to-first", "1"],
                    expect: .accepted(stdout: #"{"bob":{"name":"Bob","score":12}}"#, probe: nil)),
                rest: RESTStep(
                    method: "GET", target: #"/users.json?orderBy="score"&startAt=-5&limitToFirst=1"#,
                    expect: .accepted(status: 200, body: #"{"bob":{"name":"Bob","score":12}}"#, probe: nil))
            )
        )
        rows.append(
            MatrixRow(
                name: "NaN as a Swift value",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: "users/ada").setValue(["score": Double.nan]) },
                    expect: .error(.invalidValue, .exact("set failed: value argument contains NaN at /users/ada/score"))),
                note: "CLI and REST take JSON, which has no NaN (rows above)."
            )
        )
        rows.append(
            MatrixRow(
                name: "Infinity as a Swift value",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: "users/ada").setValue(["score": -Double.infinity]) },
                    expect: .error(.invalidValue, .exact("set failed: value argument contains Infinity at /users/ada/score")))
            )
        )
        rows.append(
            MatrixRow(
                name: "a value of an unsupported type",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: "users/ada").setValue(["born": Date(timeIntervalSince1970: 0)]) },
                    expect: .error(
                        .invalidValue,
                        .exact(
                            "set failed: value argument contains a value of unsupported type Date at /users/ada/born. Values must be strings, numbers, booleans, null, arrays or dictionaries."
                        ))),
                note: "CLI and REST: JSON has no other types."
            )
        )
        rows.append(
            MatrixRow(
                name: "a non-string dictionary key",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: "users/ada").setValue([AnyHashable(1): "x"]) },
                    expect: .error(
                        .invalidKey,
                        .exact("set failed: value argument contains a non-string key (1) at /users/ada. Keys must be strings.")))
            )
        )
        rows.append(
            MatrixRow(
                name: "string over 10 MiB",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: "users/ada").setValue(["s": hugeString]) },
                    expect: .error(
                        .invalidValue,
                        .prefix(
                            "set failed: value argument contains a string greater than 10485760 utf8 bytes at /users/ada/s ('xxxx"
                        ))),
                cli: CLIStep(
                    arguments: ["set", "users/ada", "--file", "@body"], files: ["body": hugeBody],
                    expect: .error(
                        64,
                        .prefix(
                            "set failed: value argument contains a string greater than 10485760 utf8 bytes at /users/ada/s ('xxxx"
                        ))),
                rest: RESTStep(
                    method: "PUT", target: "/users/ada.json", body: hugeBody,
                    expect: .error(
                        400,
                        .prefix(
                            "set failed: value argument contains a string greater than 10485760 utf8 bytes at /users/ada/s ('xxxx"
                        )))
            )
        )
        rows.append(
            MatrixRow(
                name: "body over the server's limit (256 MiB declared)",
                rest: RESTStep(
                    method: "PUT", target: "/users/ada.json", body: [], headers: [("Content-Length", "300000000")], sendsBody: false,
                    expect: .error(413, .exact("Payload too large: the limit is 268435456 bytes."))),
                note: "The library and the CLI have no body limit; their limit is the 10 MiB string (row above)."
            )
        )
        return rows
    }

    static func queryRow(
        _ name: String, library: (@Sendable (DatabaseReference) -> DatabaseQuery)?, _ libraryMessage: String?, cli: [String]?,
        _ cliMessage: String?, rest: String?, _ restMessage: String?, note: String = ""
    ) -> MatrixRow {
        MatrixRow(
            name: name,
            library: library.map { build in
                LibraryStep(
                    run: { db in _ = try await build(db.reference(withPath: "users")).getData() },
                    expect: .error(.invalidQuery, .exact(libraryMessage!)))
            },
            cli: cli.map { CLIStep(arguments: ["get", "users"] + $0, expect: .error(64, .exact(cliMessage!))) },
            rest: rest.map { RESTStep(method: "GET", target: "/users.json?\($0)", expect: .error(400, .exact(restMessage!))) },
            note: note
        )
    }

    static var queryRows: [MatrixRow] {
        let limitTwice = "Can't call queryLimitedToLast: if a limit was previously set"
        let keyNonString =
            "Can't use queryStartingAtValue: or queryStartingAfterValue: with non-string types when used with queryOrderedByKey"
        let equalAfterRange =
            "Can't call queryEqualToValue: after queryStartingAtValue, queryStartingAfterValue, queryEndingAtValue, queryEndingBeforeValue or queryEqualToValue was previously called"
        let childPath = "(queryOrderedByChild:) Must be a non-empty string and not contain '.' '#' '$' '[' or ']'"
        return [
            queryRow(
                "limitToFirst with limitToLast", library: { $0.queryOrderedByKey().queryLimited(toFirst: 2).queryLimited(toLast: 2) },
                limitTwice,
                cli: ["--order-by-key", "--limit-to-first", "2", "--limit-to-last", "2"],
                "Use --limit-to-first or --limit-to-last, not both: a query has one limit.",
                rest: #"orderBy="$key"&limitToFirst=2&limitToLast=2"#, limitTwice),
            queryRow(
                "two orderBys", library: { $0.queryOrderedByKey().queryOrderedByValue() }, "Cannot use multiple queryOrderedBy calls!",
                cli: ["--order-by-key", "--order-by-value"],
                "Use one of --order-by-key, --order-by-value, --order-by-child and --order-by-priority.",
                rest: #"orderBy="$key"&orderBy="$value"&limitToFirst=1"#, "orderBy is given twice; give each query parameter once."),
            queryRow(
                "filter without orderBy", library: nil, nil, cli: nil, nil,
                rest: "limitToFirst=1", "orderBy must be defined when other query parameters are defined",
                note: "Library and CLI: a limit without an order is valid (priority order), as in the SDKs."),
            queryRow(
                "orderBy not JSON", library: nil, nil, cli: nil, nil,
                rest: "orderBy=score&limitToFirst=1", "orderBy must be a valid JSON encoded path"),
            queryRow(
                "startAt a number with orderByKey", library: { $0.queryOrderedByKey().queryStarting(atValue: 1) }, keyNonString,
                cli: ["--order-by-key", "--start-at", "1"], keyNonString,
                rest: #"orderBy="$key"&startAt=1"#, keyNonString),
            queryRow(
                "limit 0", library: { $0.queryOrderedByKey().queryLimited(toFirst: 0) }, "Limit can't be zero",
                cli: ["--order-by-key", "--limit-to-first", "0"], "Limit can't be zero",
                rest: #"orderBy="$key"&limitToFirst=0"#, "Limit can't be zero"),
            queryRow(
                "limit negative", library: nil, nil,
                cli: ["--order-by-key", "--limit-to-first", "-1"], "The value '-1' is invalid for '--limit-to-first <N>'",
                rest: #"orderBy="$key"&limitToFirst=-1"#, #"limitToFirst must be a positive integer, not "-1"."#,
                note: "Library: the limit is a UInt."),
            queryRow(
                "limit of 2^31", library: { $0.queryOrderedByKey().queryLimited(toFirst: 2_147_483_648) },
                "Limit must be less than 2,147,483,648",
                cli: ["--order-by-key", "--limit-to-first", "2147483648"], "Limit must be less than 2,147,483,648",
                rest: #"orderBy="$key"&limitToFirst=2147483648"#, "Limit must be less than 2,147,483,648"),
            queryRow(
                "equalTo with startAt", library: { $0.queryOrdered(byChild: "score").queryStarting(atValue: 1).queryEqual(toValue: 2) },
                equalAfterRange,
                cli: ["--order-by-child", "score", "--start-at", "1", "--equal-to", "2"],
                "Use --equal-to or --start-at, not both: --equal-to is both the start and the end.",
                rest: #"orderBy="score"&startAt=1&equalTo=2"#, equalAfterRange),
            queryRow(
                "invalid orderBy child path", library: { $0.queryOrdered(byChild: "a.b") }, childPath,
                cli: ["--order-by-child", "a.b"], childPath,
                rest: #"orderBy="a.b"&limitToFirst=1"#, childPath),
            queryRow(
                "object as a bound", library: { $0.queryOrdered(byChild: "score").queryStarting(atValue: ["a": 1]) },
                "You can only pass nil, NSString or NSNumber to queryStartingAtValue:",
                cli: ["--order-by-child", "score", "--start-at", #"{"a":1}"#],
                #"--start-at: a query bound is a string, number, boolean or null, not {"a":1}."#,
                rest: #"orderBy="score"&startAt={"a":1}"#, "You can only pass nil, NSString or NSNumber to queryStartingAtValue:"),
            queryRow(
                "bound that is not JSON", library: nil, nil,
                cli: ["--order-by-child", "score", "--start-at", "ada"], #"--start-at: ada is not a JSON value (quote strings: '"ada"')."#,
                rest: #"orderBy="name"&startAt=ada"#,
                "startAt must be a JSON value (a quoted string, a number, a boolean or null), not ada.",
                note: "Library: bounds are Swift values."),
        ]
    }

    static var methodRows: [MatrixRow] {
        var rows: [MatrixRow] = []
        for method in ["TRACE", "OPTIONS", "PROPFIND"] {
            rows.append(
                MatrixRow(
                    name: "HTTP method \(method)",
                    rest: RESTStep(
                        method: method, target: "/users.json",
                        expect: .error(405, .exact("Method \(method) is not supported; use GET, PUT, POST, PATCH or DELETE.")))))
        }
        rows.append(
            MatrixRow(
                name: "HTTP method HEAD", rest: RESTStep(method: "HEAD", target: "/users.json", expect: .error(405, nil)),
                note: "No body in a HEAD response."))
        rows.append(
            MatrixRow(
                name: "HTTP method CONNECT", rest: RESTStep(method: "CONNECT", target: "/users.json", expect: .error(405, nil)),
                note: "NIO sends no body with a response to CONNECT."))
        rows.append(
            MatrixRow(
                name: "unsupported X-HTTP-Method-Override",
                rest: RESTStep(
                    method: "POST", target: "/users.json", body: Array("1".utf8), headers: [("X-HTTP-Method-Override", "TRACE")],
                    expect: .error(400, .exact(#"Unsupported X-HTTP-Method-Override "TRACE"."#)))))
        rows.append(
            MatrixRow(
                name: "unknown subcommand",
                cli: CLIStep(
                    arguments: ["sett", "users", "1"],
                    expect: .error(
                        64,
                        .exact(
                            "Unknown command 'sett': use one of get, set, update, push, remove, observe, import, export, serve, info, compact, repair, rules, backup, restore, cluster (canopy --help)."
                        )))))
        rows.append(
            MatrixRow(
                name: "location without .json",
                rest: RESTStep(
                    method: "PUT", target: "/users/ada", body: Array("1".utf8),
                    expect: .error(
                        400,
                        .exact(
                            #"Unsupported path "/users/ada": REST locations end in .json (for example /users/ada.json, or /.json for the root)."#
                        )))))
        rows.append(
            MatrixRow(
                name: "unknown query parameter or option",
                cli: CLIStep(arguments: ["get", "users", "--frobnicate"], expect: .error(64, .exact("Unknown option '--frobnicate'"))),
                rest: RESTStep(
                    method: "GET", target: "/users/bob.json?frobnicate=1",
                    expect: .accepted(status: 200, body: #"{"name":"Bob","score":12}"#, probe: nil)),
                note: "REST ignores unknown query parameters, as Firebase does (firebase-tools sends emulator-only ones)."
            )
        )
        rows.append(
            MatrixRow(
                name: "query parameter on a write",
                rest: RESTStep(
                    method: "PUT", target: #"/users.json?orderBy="$key""#, body: Array("1".utf8),
                    expect: .error(400, .exact("orderBy is only supported when reading (GET); this is a PUT.")))))
        rows.append(
            MatrixRow(
                name: "bad shallow value",
                rest: RESTStep(
                    method: "GET", target: "/users.json?shallow=maybe", expect: .error(400, .exact("shallow must be true or false.")))))
        rows.append(
            MatrixRow(
                name: "bad format value",
                rest: RESTStep(
                    method: "GET", target: "/users.json?format=xml",
                    expect: .error(400, .exact(#"format must be "export" (or "strict"), not "xml"."#)))))
        rows.append(
            MatrixRow(
                name: "invalid namespace",
                rest: RESTStep(
                    method: "PUT", target: "/users/ada.json?ns=..", body: Array("1".utf8),
                    expect: .error(400, .exact(#"Invalid namespace "..": use 1 to 63 letters, digits, '-' or '_'."#)))))
        rows.append(
            MatrixRow(
                name: "broken percent-encoding in the path",
                rest: RESTStep(
                    method: "PUT", target: "/users/a%zz.json", body: Array("1".utf8),
                    expect: .error(400, .exact("Invalid percent-encoding in the path.")))))
        rows.append(
            MatrixRow(
                name: "invalid UTF-8 in the path",
                rest: RESTStep(
                    method: "PUT", target: "/users/a%FF.json", body: Array("1".utf8),
                    expect: .error(400, .exact("Invalid UTF-8 in the path.")))))
        rows.append(
            MatrixRow(
                name: "if-match on a GET",
                rest: RESTStep(
                    method: "GET", target: "/users.json", headers: [("if-match", "abc")],
                    expect: .error(400, .exact("if-match is not supported for GET; use if-none-match.")))))
        rows.append(
            MatrixRow(
                name: "bad print value",
                rest: RESTStep(
                    method: "PUT", target: "/users/ada.json?print=loud", body: Array("1".utf8),
                    expect: .error(400, .exact(#"print must be "pretty" or "silent", not "loud"."#)))))
        return rows
    }

    static var priorityRows: [MatrixRow] {
        let boolPriority = "setWithPriority failed: priority argument \(priorityRules)"
        return [
            MatrixRow(
                name: "boolean priority",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: "users/ada").setPriority(true) },
                    expect: .error(.invalidPriority, .exact("setPriority failed: priority argument \(priorityRules)"))),
                rest: RESTStep(
                    method: "PUT", target: "/users/ada/.priority.json", body: Array("true".utf8),
                    expect: .error(400, .exact("setPriority failed: priority argument \(priorityRules)"))),
                note: "CLI: priorities only inside data (next row)."
            ),
            MatrixRow(
                name: "object priority with a value",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: "users/ada").setValue(1, andPriority: ["a": 1]) },
                    expect: .error(.invalidPriority, .exact(boolPriority))),
                rest: RESTStep(
                    method: "PUT", target: "/users/ada/.priority.json", body: Array(#"{"a": 1}"#.utf8),
                    expect: .error(400, .exact("setPriority failed: priority argument \(priorityRules)")))
            ),
            MatrixRow(
                name: "NaN priority",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: "users/ada").setPriority(Double.nan) },
                    expect: .error(.invalidPriority, .exact("setPriority failed: priority argument is NaN, but \(priorityRules)"))),
                rest: RESTStep(
                    method: "PUT", target: "/users/ada/.priority.json", body: Array("NaN".utf8),
                    expect: .error(
                        400,
                        .exact("\(restInvalidJSON) Invalid JSON at line 1, column 1 (byte 0): unexpected character 'N', expected a value")))
            ),
            MatrixRow(
                name: "priority on a location without data",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: "nothing").setPriority(1) },
                    expect: .error(.writeFailed, .exact("setPriority failed: there is no data at /nothing to set a priority on."))),
                rest: RESTStep(
                    method: "PUT", target: "/nothing/.priority.json", body: Array("1".utf8),
                    expect: .error(400, .exact("setPriority failed: there is no data at /nothing to set a priority on.")))
            ),
            jsonRow(
                "boolean .priority inside data", Array(#"{".value": 1, ".priority": true}"#.utf8),
                library: .error(
                    .invalidPriority,
                    .exact("import failed: value argument contains an invalid value for '/users/ada/.priority', which \(priorityRules)")),
                cli: .error(
                    64, .exact("set failed: value argument contains an invalid value for '/users/ada/.priority', which \(priorityRules)")),
                rest: .error(
                    400, .exact("set failed: value argument contains an invalid value for '/users/ada/.priority', which \(priorityRules)"))),
            jsonRow(
                ".value next to children", Array(#"{".value": 1, "name": "x"}"#.utf8),
                library: .error(
                    .invalidValue,
                    .exact(
                        #"import failed: value argument contains ".value" child at /users/ada in addition to actual children."#)),
                cli: .error(
                    64,
                    .exact(#"set failed: value argument contains ".value" child at /users/ada in addition to actual children."#)),
                rest: .error(
                    400,
                    .exact(#"set failed: value argument contains ".value" child at /users/ada in addition to actual children."#))
            ),
            jsonRow(
                "other key starting with a dot", Array(#"{".foo": 1}"#.utf8),
                library: .error(.invalidKey, .exact(dataKey(".foo", "users.ada", function: "import"))),
                cli: .error(64, .exact(dataKey(".foo", "users.ada"))),
                rest: .error(400, .exact(dataKey(".foo", "users.ada")))),
        ]
    }

    static var serverValueRows: [MatrixRow] {
        let unknown =
            #"set failed: value argument contains an invalid server value at /users/ada/t. Use {".sv": "timestamp"} or {".sv": {"increment": number}}."#
        let mixed =
            #"set failed: value argument contains ".sv" together with other keys at /users/ada/t. Server values cannot be stored with other keys."#
        return [
            MatrixRow(
                name: "unknown server value",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: "users/ada").setValue(["t": [".sv": "nope"]]) },
                    expect: .error(.invalidValue, .exact(unknown))),
                cli: CLIStep(arguments: ["set", "users/ada", #"{"t": {".sv": "nope"}}"#], expect: .error(64, .exact(unknown))),
                rest: RESTStep(
                    method: "PUT", target: "/users/ada.json", body: Array(#"{"t": {".sv": "nope"}}"#.utf8),
                    expect: .error(400, .exact(unknown)))
            ),
            MatrixRow(
                name: "server value with other keys",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: "users/ada").setValue(["t": [".sv": "timestamp", "x": 1]]) },
                    expect: .error(.invalidValue, .exact(mixed))),
                cli: CLIStep(arguments: ["set", "users/ada", #"{"t": {".sv": "timestamp", "x": 1}}"#], expect: .error(64, .exact(mixed))),
                rest: RESTStep(
                    method: "PUT", target: "/users/ada.json", body: Array(#"{"t": {".sv": "timestamp", "x": 1}}"#.utf8),
                    expect: .error(400, .exact(mixed)))
            ),
            MatrixRow(
                name: "increment by a string",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: "users/ada").setValue(["t": [".sv": ["increment": "1"]]]) },
                    expect: .error(.invalidValue, .exact(unknown))),
                cli: CLIStep(arguments: ["set", "users/ada", #"{"t": {".sv": {"increment": "1"}}}"#], expect: .error(64, .exact(unknown))),
                rest: RESTStep(
                    method: "PUT", target: "/users/ada.json", body: Array(#"{"t": {".sv": {"increment": "1"}}}"#.utf8),
                    expect: .error(400, .exact(unknown)))
            ),
            MatrixRow(
                name: "server value as a query bound",
                library: LibraryStep(
                    run: { db in
                        _ = try await db.reference(withPath: "users").queryOrdered(byChild: "score").queryStarting(
                            atValue: ServerValue.timestamp()
                        ).getData()
                    }, expect: .error(.invalidQuery, .exact("You can only pass nil, NSString or NSNumber to queryStartingAtValue:"))),
                cli: CLIStep(
                    arguments: ["get", "users", "--order-by-child", "score", "--start-at", #"{".sv":"timestamp"}"#],
                    expect: .error(64, .exact(#"--start-at: a query bound is a string, number, boolean or null, not {".sv":"timestamp"}."#))
                ),
                rest: RESTStep(
                    method: "GET", target: #"/users.json?orderBy="score"&startAt={".sv":"timestamp"}"#,
                    expect: .error(400, .exact("You can only pass nil, NSString or NSNumber to queryStartingAtValue:")))
            ),
        ]
    }

    static let emptyUpdateKey = #"update failed: values argument contains an empty path (""). Keys name children of the location."#

    /// A bad update of `/users`, refused alike everywhere with `message`: `updateChildValues(values)`
    /// (with `code`), `canopy update users JSON` (status 64) and `PATCH /users.json` (status 400).
    static func badUsersUpdate(
        _ name: String, values: [String: any Sendable], json: String, code: DatabaseError.Code, message: String
    ) -> MatrixRow {
        MatrixRow(
            name: name,
            library: LibraryStep(
                run: { db in try await db.reference(withPath: "users").updateChildValues(values) }, expect: .error(code, .exact(message))),
            cli: CLIStep(arguments: ["update", "users", json], expect: .error(64, .exact(message))),
            rest: RESTStep(method: "PATCH", target: "/users.json", body: Array(json.utf8), expect: .error(400, .exact(message))))
    }

    static var updateRows: [MatrixRow] {
        [
            badUsersUpdate(
                "update paths that overlap (a and a/b)", values: ["ada": 1, "ada/name": "x"], json: #"{"ada": 1, "ada/name": "x"}"#,
                code: .invalidPath,
                message: "update failed: values argument contains a path /ada that is ancestor of another path /ada/name"),
            badUsersUpdate(
                "update paths that are equal after normalisation (a/b and a//b/)", values: ["ada/name": 1, "/ada//name/": 2],
                json: #"{"ada/name": 1, "/ada//name/": 2}"#, code: .invalidPath,
                message: "update failed: values argument contains a path /ada/name that is ancestor of another path /ada/name"),
            badUsersUpdate(
                "update key with a forbidden character", values: ["ada/na.me": 1, "bob/score": 3],
                json: #"{"ada/na.me": 1, "bob/score": 3}"#, code: .invalidKey,
                message: "update failed: values argument contains an invalid key (na.me) in path /ada/na.me. \(keyRules)"),
            badUsersUpdate(
                "update key .sv inside a path", values: ["ada/.sv": "timestamp"], json: #"{"ada/.sv": "timestamp"}"#, code: .invalidKey,
                message: "update failed: values argument contains an invalid key (.sv) in path /ada/.sv. \(keyRules)"),
            badUsersUpdate(
                "update with an empty key", values: ["": 1], json: #"{"": 1}"#, code: .invalidKey,
                message: emptyUpdateKey),
            badUsersUpdate(
                "update with a boolean .priority", values: ["ada/.priority": true], json: #"{"ada/.priority": true}"#,
                code: .invalidPriority,
                message: "update failed: values argument contains an invalid value for '/users/ada/.priority', which \(priorityRules)"),
            MatrixRow(
                name: "update that is not an object",
                cli: CLIStep(
                    arguments: ["update", "users", "[1, 2]"],
                    expect: .error(
                        64,
                        .exact(#"update takes a JSON object of child paths and values, for example {"name": "Ada", "stats/visits": 3}."#))),
                rest: RESTStep(
                    method: "PATCH", target: "/users.json", body: Array("[1, 2]".utf8),
                    expect: .error(
                        400, .exact("Invalid data; couldn't parse JSON object. Are you sending a JSON object with valid key names?"))),
                note: "Library: the argument is a dictionary."
            ),
            badUsersUpdate(
                "update with an invalid value deep inside", values: ["ada/name": "A", "bob": ["x": ["b#d": 1]]],
                json: #"{"ada/name": "A", "bob": {"x": {"b#d": 1}}}"#, code: .invalidKey,
                message: dataKey("b#d", "users.bob.x", function: "update").replacingOccurrences(
                    of: "value argument", with: "values argument")),
            MatrixRow(
                name: "push with an invalid key in the data",
                library: LibraryStep(
                    run: { db in try await db.reference(withPath: "list").childByAutoId().setValue(["a$": 1]) },
                    expect: .error(.invalidKey, .prefix("set failed: value argument contains an invalid key (a$) at /list/"))),
                cli: CLIStep(
                    arguments: ["push", "list", #"{"a$": 1}"#],
                    expect: .error(64, .exact(dataKey("a$", "list.--------------------", function: "push")))),
                rest: RESTStep(
                    method: "POST", target: "/list.json", body: Array(#"{"a$": 1}"#.utf8),
                    expect: .error(400, .exact(dataKey("a$", "list.--------------------", function: "push"))))
            ),
        ]
    }

    static let rows: [MatrixRow] =
        keyRows + pathRows + jsonRows + queryRows + methodRows + priorityRows + serverValueRows + updateRows + rulesRows + rulesTestRows

    // MARK: - The three loops

    @Test("library")
    func library() async throws {
        var configuration = Database.Configuration()
        configuration.loopMode = .dedicatedThread
        let db = try Database.inMemory(configuration)
        defer { db.close() }
        try await db.reference().importJSON(Array(Self.seed.utf8))
        var probe: String?
        var checked = 0
        for (index, row) in Self.rows.enumerated() {
            guard let step = row.library else { continue }
            checked += 1
            var rowProbe = probe
            do {
                try await step.run(db)
                switch step.expect {
                case .error(let code, let message): Issue.record("\(row): succeeded; expected \(code): \(message)")
                case .accepted(let p): if let p { rowProbe = p }
                }
            } catch let error as DatabaseError {
                switch step.expect {
                case .error(let code, let message):
                    #expect(error.code == code, "\(row): code \(error.code), expected \(code)")
                    #expect(message.matches(error.message), "\(row):\n got      \(error.message)\n expected \(message)")
                case .accepted: Issue.record("\(row): failed with \(error); expected success")
                }
            } catch {
                Issue.record("\(row): threw \(error), not a DatabaseError")
            }
            let tree = try await db.reference().getData().jsonString(exportFormat: true)
            #expect(parseTree(tree) == expectedTree(seed: Self.seed, probe: rowProbe), "\(row): tree changed: \(tree.prefix(400))")
            try await db.reference(withPath: "probe").setValue(index)
            probe = "\(index)"
        }
        let tree = try await db.reference().getData().jsonString(exportFormat: true)
        #expect(parseTree(tree) == expectedTree(seed: Self.seed, probe: probe), "final tree: \(tree.prefix(400))")
        #expect(checked >= 50, "library rows: \(checked)")
        print("bad-input matrix, library: \(checked) of \(Self.rows.count) rows")
    }

    /// CLI rows run in batches (a process start costs 30-50 ms, a durable write more): up to
    /// `batch` failing commands, then one read-back of the whole tree and one good write. A row
    /// that is accepted (and changes /probe) closes its batch.
    /// The two halves (alternate rows) run in parallel, each on its own directory.
    @Test("command line", arguments: [0, 1])
    func commandLine(half: Int) throws {
        let batch = 4
        let dir = TemporaryDirectory()
        let db = ["--db", dir.file("db")]
        try Data(Self.seed.utf8).write(to: URL(fileURLWithPath: dir.file("seed.json")))
        var r = try canopy(["set", "/", "--file", dir.file("seed.json")] + db)
        try #require(r.status == 0, "\(r)")
        var probe: String?
        var checked = 0
        var pending: [String] = []
        let steps = Self.rows.compactMap { row in row.cli.map { (row, $0) } }.enumerated().filter { $0.offset % 2 == half }.map(\.element)
        for (index, (row, step)) in steps.enumerated() {
            checked += 1
            for (name, bytes) in step.files { try Data(bytes).write(to: URL(fileURLWithPath: dir.file(name))) }
            let arguments = step.arguments.map {
                $0.hasPrefix("@") && step.files[String($0.dropFirst())] != nil ? dir.file(String($0.dropFirst())) : $0
            }
            r = try canopy(arguments + (step.usesDatabase ? db : []), directory: dir.path)
            var closesBatch = index == steps.count - 1
            switch step.expect {
            case .error(let status, let message):
                #expect(r.status == status, "\(row): \(r)")
                #expect(r.stdout.isEmpty, "\(row): \(r)")
                let line = r.stderr.hasSuffix("\n") ? String(r.stderr.dropLast()) : r.stderr
                #expect(!line.contains("\n"), "\(row): more than one line: \(r)")
                #expect(
                    line.hasPrefix("canopy: ") && message.matches(String(line.dropFirst(8))),
                    "\(row):\n got      \(line)\n expected canopy: \(message)")
            case .accepted(let stdout, let p):
                #expect(r.status == 0, "\(row): \(r)")
                if let stdout { #expect(r.output == stdout, "\(row): \(r)") }
                if let p { probe = p }
                closesBatch = true
            }
            for name in step.files.keys { try? FileManager.default.removeItem(atPath: dir.file(name)) }
            pending.append(row.name)
            if pending.count < batch && !closesBatch { continue }
            r = try canopy(["get", "/", "--export"] + db)
            #expect(
                r.status == 0 && parseTree(r.output) == expectedTree(seed: Self.seed, probe: probe),
                "after \(pending): tree changed: \(r.output.prefix(400))")
            r = try canopy(["set", "probe", "\(index)"] + db)
            #expect(r.status == 0, "after \(pending): the good write failed: \(r)")
            probe = "\(index)"
            pending = []
        }
        r = try canopy(["get", "/", "--export"] + db)
        #expect(parseTree(r.output) == expectedTree(seed: Self.seed, probe: probe), "final tree: \(r.output.prefix(400))")
        #expect(!FileManager.default.fileExists(atPath: dir.file("canopy-data")), "a command wrote the default directory")
        #expect(checked >= 25, "CLI rows: \(checked)")
        print("bad-input matrix, command line (half \(half)): \(checked) rows")
    }

    @Test("REST")
    func rest() throws {
        let dir = TemporaryDirectory()
        let (server, url) = try startServer(dir.file("db"))
        defer { _ = try? server.stop() }
        let port = try #require(serverPort(of: url))
        var reply = try httpRequest(port: port, method: "PUT", target: "/.json", body: Array(Self.seed.utf8))
        try #require(reply.status == 200, "\(reply)")
        var probe: String?
        var checked = 0
        for (index, row) in Self.rows.enumerated() {
            guard let step = row.rest else { continue }
            checked += 1
            reply = try httpRequest(
                port: port, method: step.method, target: step.target, body: step.body, headers: step.headers, sendsBody: step.sendsBody)
            var rowProbe = probe
            switch step.expect {
            case .error(let status, let message):
                #expect(reply.status == status, "\(row): \(reply)")
                if let message {
                    #expect(
                        reply.errorMessage.map(message.matches) == true,
                        "\(row):\n got      \(reply.text.prefix(300))\n expected \(message)")
                    #expect(
                        reply.headers.contains { $0.0 == "content-type" && $0.1.hasPrefix("application/json") }, "\(row): \(reply.headers)")
                } else {
                    #expect(reply.body.isEmpty, "\(row): \(reply)")
                }
            case .accepted(let status, let body, let p):
                #expect(reply.status == status, "\(row): \(reply)")
                if let body { #expect(reply.text == body, "\(row): \(reply)") }
                if let p { rowProbe = p }
            }
            reply = try httpRequest(port: port, method: "GET", target: "/.json?format=export")
            #expect(
                reply.status == 200 && parseTree(reply.text) == expectedTree(seed: Self.seed, probe: rowProbe),
                "\(row): tree changed: \(reply)")
            reply = try httpRequest(port: port, method: "PUT", target: "/probe.json?print=silent", body: Array("\(index)".utf8))
            #expect(reply.status == 204, "\(row): the good write failed: \(reply)")
            probe = "\(index)"
        }
        reply = try httpRequest(port: port, method: "GET", target: "/.json?format=export")
        #expect(parseTree(reply.text) == expectedTree(seed: Self.seed, probe: probe), "final tree: \(reply)")
        #expect(checked >= 50, "REST rows: \(checked)")
        print("bad-input matrix, REST: \(checked) of \(Self.rows.count) rows")
    }
}
