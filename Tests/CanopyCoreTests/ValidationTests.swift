import CanopyCore
import CanopyTestSupport
import Testing

/// The error converting `value` at `location` throws, or `nil` when it is accepted.
private func conversionError(_ value: JSONValue, at location: [String] = [], function: String = "set") -> DatabaseError? {
    do {
        var converter = try ValueConverter(function: function, location: location)
        _ = try converter.convert(value)
        return nil
    } catch {
        return error
    }
}

private func pathError(_ string: String) -> DatabaseError? {
    do {
        _ = try DatabasePath(validating: string, function: "child")
        return nil
    } catch {
        return error
    }
}

/// `{"k0": {"k1": … {"k<n-1>": leaf}}}`: a value reaching depth `n` below its location.
private func nested(depth n: Int, leaf: JSONValue = true) -> JSONValue {
    var value = leaf
    for i in stride(from: n - 1, through: 0, by: -1) { value = .object(["k\(i)": value]) }
    return value
}

private let keyRules = ##"Keys must be non-empty strings and can't contain ".", "#", "$", "/", "[", or "]""##
private let priorityRules = "must be a valid Firebase priority (a string, finite number, server value, or null)."

@Suite("Validation")
struct ValidationTests {
    @Test("an invalid key names the key and the property, with the double space of the JS message")
    func invalidKeyMessage() {
        let error = conversionError(["a.b": 1], at: ["u"])
        #expect(error?.code == .invalidKey)
        #expect(error?.message == "set failed: value argument contains an invalid key (a.b) at /u. \(keyRules)")
        let nestedError = conversionError(["x": ["ha#sh": 1]], at: ["u", "v"], function: "update")
        #expect(nestedError?.message == "update failed: value argument contains an invalid key (ha#sh) at /u/v/x. \(keyRules)")
        let atRoot = conversionError(["[what": 1])
        #expect(atRoot?.message == "set failed: value argument contains an invalid key ([what). \(keyRules)")
    }

    @Test(
        "every forbidden key is rejected, at the top and deeper",
        arguments: [
            ".test", "test.", "fo$o", "[what", "ever]", "ha#sh", "/thing", "th/ing", "thing/", "", ".foo", ".keys", ".length", ".info",
            "a\u{0}b", "\u{1}", "x\u{1F}", "\u{7F}", "tab\there", "new\nline",
        ]
    )
    func forbiddenKeys(key: String) {
        let top = conversionError(.object([key: "test"]))
        #expect(top?.code == .invalidKey)
        #expect(top?.message.contains("contains an invalid key (\(key))") == true)
        let deeper = conversionError(["deeper": .object([key: "test"])], at: ["loc"])
        #expect(deeper?.code == .invalidKey)
        #expect(deeper?.message.contains("at /loc/deeper") == true)
        #expect(!KeyValidation.isValidKey(key))
    }

    @Test(
        "unusual but valid keys are accepted",
        arguments: ["\"herp\"", "\"", "'", " ", "a b", "emoji\u{1F600}", "-", "_", "~", "UPPER", "é", "\u{80}", "1,5e3"])
    func validKeys(key: String) throws {
        #expect(conversionError(.object([key: 1])) == nil)
        #expect(KeyValidation.isValidKey(key))
        #expect(try makeNode(.object([key: 1])).child(ChildKey(key)).leafValue == .int(1))
    }

    @Test(".value next to actual children")
    func dotValueWithChildren() {
        let error = conversionError([".value": 1, "a": 2], at: ["u"])
        #expect(error?.code == .invalidValue)
        #expect(error?.message == "set failed: value argument contains \".value\" child at /u in addition to actual children.")
    }

    @Test(".value holding an object or array is rejected", arguments: [[:], ["a": 1], [1, 2]] as [JSONValue])
    func dotValueObject(inner: JSONValue) {
        let error = conversionError([".value": inner], at: ["u"])
        #expect(error?.code == .invalidValue)
        #expect(
            error?.message
                == "set failed: value argument contains an invalid \".value\" at /u. Only a string, number, boolean or null can be used with .value."
        )
    }

    @Test(".value with a leaf or null is accepted")
    func dotValueLeaf() throws {
        #expect(try makeNode([".value": "x"]) == .leaf(.string("x")))
        #expect(try makeNode([".value": .null]).isEmpty)
        #expect(try makeNode([".value": .null, ".priority": 1]).isEmpty)
        #expect(try makeNode(["a": [".value": false, ".priority": "p"]]).exportJSON == ["a": [".value": false, ".priority": "p"]])
    }

    @Test("NaN and Infinity name the property")
    func nonFinite() {
        let nan = conversionError(["p": ["q": .double(.nan)]], at: [])
        #expect(nan?.code == .invalidValue)
        #expect(nan?.message == "set failed: value argument contains NaN at /p/q")
        let inf = conversionError(["p": .double(.infinity)], at: ["loc"])
        #expect(inf?.message == "set failed: value argument contains Infinity at /loc/p")
        let negInf = conversionError(.double(-.infinity), at: ["loc"])
        #expect(negInf?.message == "set failed: value argument contains Infinity at /loc")
        let inArray = conversionError([1, .double(.nan)], at: ["a"])
        #expect(inArray?.message == "set failed: value argument contains NaN at /a/1")
        let atRoot = conversionError(.double(.nan))
        #expect(atRoot?.message == "set failed: value argument contains NaN")
    }

    @Test("depth: 32 segments are fine, 33 fail, counting the location")
    func depth() {
        #expect(conversionError(nested(depth: 32)) == nil)
        let error = conversionError(nested(depth: 33))
        #expect(error?.code == .invalidValue)
        let property = (0...32).map { "k\($0)" }.joined(separator: "/")
        #expect(
            error?.message
                == "set failed: value argument path specified exceeds the maximum depth that can be written (32) or object contains a cycle at /\(property)"
        )
        let location = (0..<30).map { "l\($0)" }
        #expect(conversionError(nested(depth: 2), at: location) == nil)
        #expect(conversionError(nested(depth: 3), at: location)?.code == .invalidValue)
        #expect(conversionError(true, at: (0..<32).map { "l\($0)" }) == nil)
        #expect(conversionError(true, at: (0..<33).map { "l\($0)" })?.code == .invalidValue)
        // A null deep down is still checked: the JS client walks the value before dropping nulls.
        #expect(conversionError(nested(depth: 33, leaf: .null)) != nil)
    }

    @Test("path length: 768 UTF-8 bytes with the leading slash are fine, 769 fail")
    func pathLength() {
        #expect(conversionError(.object([String(repeating: "k", count: 767): 1])) == nil)
        let error = conversionError(.object([String(repeating: "k", count: 768): 1]))
        #expect(error?.code == .invalidValue)
        #expect(error?.message == "set failed: value argument has a key path longer than 768 bytes (769).")
        // Counted in UTF-8 bytes: 383 × "é" (766 bytes) + "a" → 768 with the slash.
        #expect(conversionError(.object([String(repeating: "é", count: 383) + "a": 1])) == nil)
        #expect(conversionError(.object([String(repeating: "é", count: 384): 1]))?.message.hasSuffix("(769).") == true)
        // The location counts: "/a/" + 765 = 768.
        #expect(conversionError(.object([String(repeating: "k", count: 765): 1]), at: ["a"]) == nil)
        #expect(conversionError(.object([String(repeating: "k", count: 766): 1]), at: ["a"])?.message.hasSuffix("(769).") == true)
        #expect(conversionError(1, at: [String(repeating: "k", count: 768)])?.code == .invalidValue)
    }

    @Test("string leaves: 10 485 760 UTF-8 bytes are fine, one more fails")
    func stringSize() {
        let limit = 10_485_760
        #expect(conversionError(["s": .string(String(repeating: "x", count: limit))]) == nil)
        let error = conversionError(["s": .string(String(repeating: "x", count: limit + 1))])
        #expect(error?.code == .invalidValue)
        #expect(
            error?.message.hasPrefix("set failed: value argument contains a string greater than 10485760 utf8 bytes at /s ('xxxx")
                == true)
        #expect(conversionError(["s": .string(String(repeating: "é", count: limit / 2))]) == nil)
        #expect(conversionError(["s": .string(String(repeating: "é", count: limit / 2) + "x")])?.code == .invalidValue)
    }

    @Test("server values: .sv alone, known kinds only")
    func serverValueShapes() {
        let mixed = conversionError(["invalid": "data", ".sv": "timestamp"], at: ["u"])
        #expect(mixed?.code == .invalidValue)
        #expect(
            mixed?.message
                == "set failed: value argument contains \".sv\" together with other keys at /u. Server values cannot be stored with other keys."
        )
        for unknown in ["nope", ["increment": "1"], ["increment": 1, "x": 2], ["decrement": 1], true, 5] as [JSONValue] {
            let error = conversionError(["a": [".sv": unknown]], at: ["u"])
            #expect(error?.code == .invalidValue)
            #expect(
                error?.message
                    == "set failed: value argument contains an invalid server value at /u/a. Use {\".sv\": \"timestamp\"} or {\".sv\": {\"increment\": number}}."
            )
        }
        #expect(conversionError([".sv": "timestamp"]) == nil)
        #expect(conversionError(["a": [".sv": ["increment": 2.5]], "b": [".sv": ["increment": -3]]]) == nil)
    }

    @Test(
        "invalid .priority values inside data",
        arguments: [true, false, ["x": "y"], [1], .double(.nan), .double(.infinity), [".sv": "nope"]] as [JSONValue])
    func invalidDataPriority(priority: JSONValue) {
        let error = conversionError(["a": 1, ".priority": priority], at: ["u"])
        #expect(error?.code == .invalidPriority)
        #expect(error?.message == "set failed: value argument contains an invalid value for '/u/.priority', which \(priorityRules)")
        let nestedError = conversionError(["b": ["a": 1, ".priority": priority]], at: ["u"])
        #expect(nestedError?.message == "set failed: value argument contains an invalid value for '/u/b/.priority', which \(priorityRules)")
    }

    @Test(
        "valid .priority values inside data",
        arguments: [.null, 0, -1.5, "", "p", [".sv": "timestamp"], [".sv": ["increment": 1]]] as [JSONValue])
    func validDataPriority(priority: JSONValue) throws {
        #expect(conversionError(["a": 1, ".priority": priority]) == nil)
    }

    @Test("priority arguments (setPriority, setValue(_:andPriority:))")
    func priorityArgument() throws {
        #expect(try ValueConverter.priority(.null, function: "setPriority") == .none)
        #expect(try ValueConverter.priority("6", function: "setPriority") == .value(.string("6")))
        #expect(try ValueConverter.priority(7, function: "setPriority") == .value(.int(7)))
        #expect(try ValueConverter.priority(7.5, function: "setPriority") == .value(.double(7.5)))
        #expect(try ValueConverter.priority([".sv": "timestamp"], function: "setPriority") == .serverValue(.timestamp))
        #expect(try ValueConverter.priority([".sv": ["increment": 1]], function: "setPriority") == .serverValue(.increment(.int(1))))
        #expect(throws: DatabaseError(.invalidPriority, "setWithPriority failed: priority argument is NaN, but \(priorityRules)")) {
            try ValueConverter.priority(.double(.nan), function: "setWithPriority")
        }
        for invalid in [true, [:], [], ["a": 1], .double(.infinity), [".sv": "nope"], [".sv": "timestamp", "x": 1]] as [JSONValue] {
            #expect(throws: DatabaseError(.invalidPriority, "setWithPriority failed: priority argument \(priorityRules)")) {
                try ValueConverter.priority(invalid, function: "setWithPriority")
            }
        }
    }

    // MARK: - Paths

    @Test(
        "DatabasePath rejects forbidden characters with the JS message",
        arguments: ["a.b", "a#b", "a$b", "a[b", "a]b", "a/b.c/d", "x\u{0}", "x\u{1F}", "x\u{7F}", ".foo", "foo/.info", "a/.info/b"])
    func invalidPaths(path: String) {
        let error = pathError(path)
        #expect(error?.code == .invalidPath)
        #expect(
            error?.message
                == "child failed: path argument was an invalid path = \"\(path)\". Paths must be non-empty strings and can't contain \".\", \"#\", \"$\", \"[\", or \"]\""
        )
    }

    @Test("DatabasePath accepts .info as the first segment only, and normalizes slashes")
    func infoPaths() throws {
        let info = try DatabasePath(validating: ".info/connected", function: "child")
        #expect(info.keys.map(\.string) == [".info", "connected"])
        #expect(info.isInfo)
        #expect(try DatabasePath(validating: "/.info", function: "child").isInfo)
        #expect(try DatabasePath(validating: "//.info//serverTimeOffset/", function: "child").keys.count == 2)
        #expect(try !DatabasePath(validating: "info", function: "child").isInfo)
        #expect(pathError("a/.info") != nil)
        #expect(try DatabasePath(validating: "a//b/", function: "child").keys.map(\.string) == ["a", "b"])
        #expect(try DatabasePath(validating: "", function: "child").isRoot)
        #expect(try DatabasePath(validating: "///", function: "child").isRoot)
        #expect(try DatabasePath(validating: "with space/\u{1F600}/-", function: "child").count == 3)
    }

    @Test("path parsing agrees with splitting on / and validating each segment, for random paths")
    func pathParsingOracle() {
        // Pieces that exercise the separator, every invalid byte, integer keys, `.info`, and
        // multi-byte scalars (a combining mark right after a `/` still leaves it a separator).
        let pieces = [
            "/", "/", "//", "a", "b7", "12", "-3", "007", "2147483648", ".info", ".", "#", "$", "[", "]", "\u{7F}", "\u{1}", " ",
            "\u{301}", "é", "\u{1F600}", "-", "restaurants", "r15", "ratings", "-NxYz0123456789abcde",
        ]
        var rng = SeededGenerator(seed: 19)
        for _ in 0..<3000 {
            let string = (0..<Int.random(in: 0...6, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
            // The oracle: split the bytes on `/`, drop empty segments; each must be a valid key,
            // but `.info` as the first.
            var expected: [String]? = []
            for raw in string.utf8.split(separator: UInt8(ascii: "/")) {
                let segment = String(Substring(raw))
                if KeyValidation.isValidKey(segment) || (expected?.isEmpty == true && segment == ".info") {
                    expected?.append(segment)
                } else {
                    expected = nil
                    break
                }
            }
            let parsed = try? DatabasePath(validating: string, function: "child")
            #expect(parsed?.keys.map { $0.string } == expected, "\(string.debugDescription)")
            // Integer values are the keys' own: equal to keys made from the strings.
            #expect(parsed?.keys == expected?.map { ChildKey($0) })
            #expect(parsed?.keys.map { $0.integerValue } == expected?.map { ChildKey($0).integerValue })
        }
    }

    @Test("the path error names the function and argument")
    func pathErrorNaming() {
        #expect(
            throws: DatabaseError(
                .invalidPath,
                "orderByChild failed: path argument was an invalid path = \"a$\". Paths must be non-empty strings and can't contain \".\", \"#\", \"$\", \"[\", or \"]\""
            )
        ) {
            try DatabasePath(validating: "a$", function: "orderByChild")
        }
        #expect(throws: DatabaseError.self) { try DatabasePath(validating: "a$", function: "x", argument: "key") }
    }

    @Test("conversion keeps the value: nulls dropped, arrays keyed by index, priorities kept")
    func conversionResult() throws {
        var converter = try ValueConverter(function: "set", location: ["loc"])
        let write = try converter.convert(["a": .null, "b": [1, .null, 3], "c": ["d": [:]], "e": ["x": 1, ".priority": 2]])
        #expect(write.node.exportJSON == ["b": ["0": 1, "2": 3], "e": ["x": 1, ".priority": 2]])
        #expect(write.placeholders.isEmpty)
        var sv = try ValueConverter(function: "set", location: [])
        let withPlaceholders = try sv.convert(["t": [".sv": "timestamp"], "n": ["i": [".sv": ["increment": 1]]]])
        #expect(withPlaceholders.placeholders.count == 2)
        #expect(Set(withPlaceholders.placeholders.map { $0.path.map(\.string).joined(separator: "/") }) == ["t", "n/i"])
    }
}
