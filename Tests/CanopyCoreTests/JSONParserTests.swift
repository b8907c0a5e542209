import CanopyCore
import CanopyTestSupport
import Foundation
import Testing

/// Parses `text` into a ``JSONValue``.
private func parse(_ text: String) throws -> JSONValue { try JSONValue(parsing: text) }

/// The `invalidJSON` message parsing `bytes` fails with, or `nil` when it parses.
private func failure(_ bytes: [UInt8], maxDepth: Int = 1000) -> String? {
    var builder = JSONValueBuilder()
    do {
        _ = try JSONParser(maxDepth: maxDepth).parse(bytes, into: &builder)
        return nil
    } catch let error as DatabaseError {
        return error.code == .invalidJSON ? error.message : "wrong code \(error.code): \(error.message)"
    } catch {
        return "unexpected error \(error)"
    }
}

@Suite("JSON parser")
struct JSONParserTests {
    @Test(
        "rejects invalid text, naming the problem and its position",
        arguments: [
            ("[1,2,]", "line 1, column 6 (byte 5): trailing comma before ']'"),
            (#"{"a":1,}"#, "(byte 7): trailing comma before '}'"),
            ("[1] // comment", "(byte 4): unexpected character '/' after the JSON value"),
            ("/* comment */ 1", "(byte 0): unexpected character '/', expected a value"),
            ("['a']", "(byte 1): unexpected character ''', expected a value"),
            ("{'a': 1}", "(byte 1): expected '\"' to start an object key, found character '''"),
            ("01", "(byte 0): leading zeros are not allowed in numbers"),
            ("-012", "(byte 0): leading zeros are not allowed in numbers"),
            ("+1", "(byte 0): unexpected character '+', expected a value"),
            (".5", "(byte 0): unexpected character '.', expected a value"),
            ("1.", "(byte 2): unexpected end of input, expected a digit after the decimal point"),
            ("[1.e5]", "(byte 3): expected a digit after the decimal point, found character 'e'"),
            ("1e", "(byte 2): unexpected end of input, expected a digit in the exponent"),
            ("1e+", "(byte 3): unexpected end of input, expected a digit in the exponent"),
            ("-", "(byte 1): unexpected end of input, expected a digit after '-'"),
            ("NaN", "(byte 0): unexpected character 'N', expected a value"),
            ("Infinity", "(byte 0): unexpected character 'I', expected a value"),
            ("-Infinity", "(byte 1): expected a digit after '-', found character 'I'"),
            ("[nul]", "(byte 1): invalid literal, expected 'null'"),
            ("tru", "(byte 3): unexpected end of input in 'true'"),
            ("\"a\u{01}b\"", "(byte 2): unescaped control character U+0001 in string"),
            ("\"line\nbreak\"", "(byte 5): unescaped control character U+000A in string"),
            (#""\x""#, #"(byte 1): invalid escape '\x' in string"#),
            (#""\u12G4""#, #"(byte 1): invalid \u escape: expected 4 hex digits, found character 'G'"#),
            (#""\uD800""#, #"(byte 1): lone surrogate \uD800 (high surrogate not followed by a \u low surrogate)"#),
            (#""ab\uDC00""#, #"(byte 3): lone surrogate \uDC00 (low surrogate without a high surrogate)"#),
            (#""\uD800\u0041""#, #"(byte 1): lone surrogate \uD800 (followed by \u0041, not a low surrogate)"#),
            ("1 2", "(byte 2): unexpected character '2' after the JSON value"),
            ("", "line 1, column 1 (byte 0): empty input"),
            (" \n\t\r ", "line 2, column 4 (byte 5): empty input"),
            ("1e400", "(byte 0): number out of range: 1e400"),
            ("[-1e400]", "(byte 1): number out of range: -1e400"),
            ("1.7976931348623159e308", "number out of range: 1.7976931348623159e308"),
            (#"{"a" 1}"#, "(byte 5): expected ':' after object key, found character '1'"),
            (#"{"a":1 "b":2}"#, "(byte 7): expected ',' or '}' after object member, found character '\"'"),
            ("[1 2]", "(byte 3): expected ',' or ']' after array element, found character '2'"),
            ("{1:2}", "(byte 1): expected '\"' to start an object key, found character '1'"),
            ("[", "(byte 1): unexpected end of input, expected a value"),
            (#"{"a":1"#, "(byte 6): unexpected end of input, expected ',' or '}' after object member"),
            (#"{"a""#, "(byte 4): unexpected end of input, expected ':' after object key"),
            (#""abc"#, "(byte 4): unexpected end of input inside string"),
            (#""abc\"#, "(byte 5): unexpected end of input inside string"),
            ("\u{0C}1", "(byte 0): unexpected control character U+000C, expected a value"),
            ("\u{A0}1", "(byte 0): unexpected character '\u{A0}', expected a value"),
            ("[1]]", "(byte 3): unexpected character ']' after the JSON value"),
            ("{\n  \"a\": 1,\n  \"b\" 2\n}", "line 3, column 7 (byte 18): expected ':' after object key"),
            ("[\"é\", x]", "line 1, column 7 (byte 7): unexpected character 'x'"),
        ]
    )
    func rejects(text: String, expected: String) {
        let message = failure(Array(text.utf8))
        #expect(message?.hasPrefix("Invalid JSON at line ") == true, "\(text.debugDescription) gave \(message ?? "no error")")
        #expect(message?.contains(expected) == true, "\(text.debugDescription) gave \(message ?? "no error")")
    }

    @Test(
        "rejects invalid UTF-8 anywhere",
        arguments: [
            ([0x22, 0xFF, 0x22], "(byte 1): invalid UTF-8 byte 0xFF"),
            ([0xFF], "(byte 0): unexpected invalid UTF-8 byte 0xFF, expected a value"),
            ([0x31, 0x20, 0xC3], "(byte 2): unexpected invalid UTF-8 byte 0xC3 after the JSON value"),
            ([0x22, 0xC0, 0x80, 0x22], "(byte 1): invalid UTF-8 byte 0xC0"),  // overlong NUL
            ([0x22, 0xE0, 0x80, 0x80, 0x22], "(byte 2): invalid UTF-8 byte 0x80"),  // overlong
            ([0x22, 0xED, 0xA0, 0x80, 0x22], "(byte 2): invalid UTF-8 byte 0xA0"),  // encoded surrogate
            ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], "(byte 2): invalid UTF-8 byte 0x90"),  // above U+10FFFF
            ([0x22, 0x80, 0x22], "(byte 1): invalid UTF-8 byte 0x80"),  // lone continuation
            ([0x22, 0xE2, 0x82, 0x22], "(byte 3): invalid UTF-8 byte 0x22"),  // truncated sequence
            ([0x22, 0xE2, 0x82], "(byte 3): unexpected end of input inside string"),
            ([0x22, 0x5C, 0xC3, 0xA9, 0x22], "(byte 1): invalid escape in string: backslash followed by character 'é'"),
        ] as [([UInt8], String)]
    )
    func rejectsInvalidUTF8(bytes: [UInt8], expected: String) {
        let message = failure(bytes)
        #expect(message?.contains(expected) == true, "\(bytes) gave \(message ?? "no error")")
    }

    @Test("accepts every kind of value, with whitespace around and between")
    func acceptsValues() throws {
        let value = try parse(" \t\r\n{ \"a\" : [ 1 , -2.5 , true , false , null , \"s\" , { } , [ ] ] ,\n\"b\":{\"c\":\"d\"} } \r\n")
        #expect(value == ["a": [1, -2.5, true, false, .null, "s", [:], []], "b": ["c": "d"]])
        #expect(try parse("true") == true)
        #expect(try parse("null") == .null)
        #expect(try parse(#""""#) == "")
        #expect(try parse("[[],[[]],{}]") == [[], [[]], [:]])
    }

    @Test(
        "reads numbers as Int64 when they are integer literals that fit, as Double otherwise",
        arguments: [
            ("0", JSONValue.int(0)), ("-0", .int(0)), ("42", .int(42)), ("-17", .int(-17)),
            ("9223372036854775807", .int(Int64.max)), ("-9223372036854775808", .int(Int64.min)),
            ("9223372036854775808", .double(9_223_372_036_854_775_808.0)),
            ("-9223372036854775809", .double(-9_223_372_036_854_775_809.0)),
            ("123456789012345678901234567890", .double(1.2345678901234568e29)),
            ("1.0", .double(1.0)), ("1E2", .double(100)), ("1e-2", .double(0.01)), ("1.5E+3", .double(1500)),
            ("-0.0", .double(-0.0)), ("0e400", .double(0)), ("1e-400", .double(0)),
            ("0.1", .double(0.1)), ("2.2250738585072014e-308", .double(2.2250738585072014e-308)),
            ("4.9e-324", .double(Double.leastNonzeroMagnitude)), ("1.7976931348623157e308", .double(Double.greatestFiniteMagnitude)),
            ("0.30000000000000004", .double(0.30000000000000004)), ("9007199254740993", .int(9_007_199_254_740_993)),
            ("9007199254740993.0", .double(9_007_199_254_740_992)),
        ]
    )
    func numbers(text: String, expected: JSONValue) throws {
        let value = try parse(text)
        switch (value, expected) {
        case (.int(let a), .int(let b)): #expect(a == b)
        case (.double(let a), .double(let b)): #expect(a.bitPattern == b.bitPattern, "\(text) → \(a), expected \(b)")
        default: Issue.record("\(text) → \(value), expected \(expected)")
        }
    }

    @Test("rounds decimal literals exactly as the standard library does")
    func numberRounding() throws {
        var random = JSONTestRandom(seed: 7)
        for _ in 0..<5000 {
            var literal = Int.random(in: 0..<4, using: &random) == 0 ? "-" : ""
            let integerDigits = Int.random(in: 1...22, using: &random)
            literal += String(Int.random(in: 1...9, using: &random))
            for _ in 1..<integerDigits { literal += String(Int.random(in: 0...9, using: &random)) }
            if Bool.random(using: &random) {
                literal += "."
                for _ in 0..<Int.random(in: 1...20, using: &random) { literal += String(Int.random(in: 0...9, using: &random)) }
            }
            if Bool.random(using: &random) { literal += "e\(Int.random(in: -330...290, using: &random))" }
            guard let expected = Double(literal), expected.isFinite else { continue }
            let value = try parse(literal)
            if case .int(let i) = value {
                #expect(Int64(literal) == i, "\(literal)")
            } else if case .double(let d) = value {
                #expect(d.bitPattern == expected.bitPattern, "\(literal) → \(d), expected \(expected)")
            } else {
                Issue.record("\(literal) → \(value)")
            }
        }
    }

    @Test(
        "decodes escapes, including surrogate pairs, and raw UTF-8",
        arguments: [
            (#""\u00e9\u00C9""#, "éÉ"), (#""\uD83D\uDE00""#, "😀"), (#""\ud83c\udf89!""#, "🎉!"),
            (#""\u0000""#, "\u{0}"), (#""\"\\\/\b\f\n\r\t""#, "\"\\/\u{8}\u{C}\n\r\t"),
            (#""a\u0041b\nc""#, "aAb\nc"), ("\"日本語 🎉 café\"", "日本語 🎉 café"),
            (#""\u65E5\u672C""#, "日本"), ("\"\u{7F}\"", "\u{7F}"),
            (
                #""long prefix without escapes, then \"quoted\" text and more""#,
                "long prefix without escapes, then \"quoted\" text and more"
            ),
        ]
    )
    func strings(text: String, expected: String) throws {
        #expect(try parse(text) == .string(expected))
    }

    @Test("a special character at every offset of a string is found", arguments: ["\"", "\\", "\u{1}", "é", "🎉", "\n"])
    func specialCharacterOffsets(special: String) throws {
        for length in 0..<20 {
            for offset in 0...length {
                let plain = String(repeating: "x", count: length)
                let string = String(plain.prefix(offset)) + special + String(plain.dropFirst(offset))
                var text: [UInt8] = []
                JSONWriter.appendString(string, to: &text)
                #expect(try JSONValue(parsing: text) == .string(string))
                if special == "\u{1}" || special == "\n" {
                    let raw = "\"" + string + "\""
                    #expect(failure(Array(raw.utf8))?.contains("(byte \(offset + 1)): unescaped control character") == true)
                }
            }
        }
    }

    @Test("duplicate keys: the parser passes them in order and the value builder keeps the last")
    func duplicateKeys() throws {
        #expect(try parse(#"{"a":1,"b":2,"a":3}"#) == ["a": 3, "b": 2])
        var recorder = KeyRecorder()
        _ = try JSONParser().parse(#"{"a":1,"b":{"x":0},"a":3}"#, into: &recorder)
        #expect(recorder.objects == [["x"], ["a", "b", "a"]])
    }

    @Test("nesting up to the depth limit parses; one level more is an error, never a crash")
    func depthLimit() throws {
        let deepest = String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000)
        #expect(failure(Array(deepest.utf8)) == nil)
        let objects = String(repeating: #"{"a":"#, count: 1000) + "1" + String(repeating: "}", count: 1000)
        #expect(failure(Array(objects.utf8)) == nil)
        let tooDeep = String(repeating: "[", count: 1001) + String(repeating: "]", count: 1001)
        #expect(failure(Array(tooDeep.utf8))?.contains("(byte 1000): nesting deeper than 1000 levels") == true)
        let huge = [UInt8](repeating: UInt8(ascii: "["), count: 1_000_000)
        #expect(failure(huge)?.contains("nesting deeper than 1000 levels") == true)
        #expect(failure(Array("[[[]]]".utf8), maxDepth: 3) == nil)
        #expect(failure(Array("[[[{}]]]".utf8), maxDepth: 3)?.contains("nesting deeper than 3 levels") == true)
    }

    @Test("sibling containers at the same depth do not leak elements into each other")
    func scratchReuse() throws {
        let value = try parse(#"[[1,2,3],[4],[],[5,[6,7],8],{"a":{"x":1},"b":{"y":2},"c":{}}]"#)
        #expect(value == [[1, 2, 3], [4], [], [5, [6, 7], 8], ["a": ["x": 1], "b": ["y": 2], "c": [:]]])
    }

    @Test("String, byte array and raw buffer inputs agree")
    func inputKinds() throws {
        let text = #"{"k": ["v", 1, 2.5, "é\n"]}"#
        let bytes = Array(text.utf8)
        var builder = JSONValueBuilder()
        let fromBuffer = try bytes.withUnsafeBytes { try JSONParser().parse($0, into: &builder) }
        #expect(try JSONValue(parsing: text) == fromBuffer)
        #expect(try JSONValue(parsing: bytes) == fromBuffer)
    }

    @Test("errors thrown by the builder pass through unchanged")
    func builderErrors() {
        var builder = RejectingBuilder()
        #expect(throws: DatabaseError(.invalidKey, "no strings")) {
            _ = try JSONParser().parse(#"[1, "s"]"#, into: &builder)
        }
    }
}

/// Records the keys of every object in the order the parser passes them.
private struct KeyRecorder: JSONBuilder {
    var objects: [[String]] = []
    func null() {}
    func bool(_ b: Bool) {}
    func int(_ i: Int64) {}
    func double(_ d: Double) {}
    func string(_ s: String) {}
    func array(_ elements: inout [Void]) {}
    mutating func object(_ members: inout [(key: String, value: Void)]) {
        self.objects.append(members.map(\.key))
    }
}

/// Accepts everything but strings.
private struct RejectingBuilder: JSONBuilder {
    func null() {}
    func bool(_ b: Bool) {}
    func int(_ i: Int64) {}
    func double(_ d: Double) {}
    func string(_ s: String) throws { throw DatabaseError(.invalidKey, "no strings") }
    func array(_ elements: inout [Void]) {}
    func object(_ members: inout [(key: String, value: Void)]) {}
}

@Suite("JSON parser agrees with Foundation")
struct JSONFoundationAgreementTests {
    @Test("random documents and one-byte corruptions of them: what we accept, JSONSerialization reads alike")
    func agreement() throws {
        var random = JSONTestRandom(seed: 2024)
        var bothAccepted = 0
        let interesting = Array(",:[]{}\"\\0123456789-+.eE tnfu\n".utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xC3, 0xFF]
        for round in 0..<400 {
            let value = RandomJSONValue.value(depth: 4, using: &random)
            var bytes = JSONWriter.bytes(value, options: round % 2 == 0 ? [] : [.pretty])
            if round % 3 == 2 {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = interesting.randomElement(using: &random)!
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let theirs = try? JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed)
            if let problem = failure(bytes) {
                // Foundation is lenient about trailing commas only.
                #expect(theirs == nil || problem.contains("trailing comma"), "Foundation accepts \(text); we say \(problem)")
            } else {
                let ours = try JSONValue(parsing: bytes)
                let theirs = try #require(theirs, "Foundation rejects \(text)")
                #expect(fromFoundation(theirs) == ours, "\(text)")
                bothAccepted += 1
            }
        }
        #expect(bothAccepted > 250)
    }

    /// Converts what `JSONSerialization` returns into ``JSONValue``.
    private func fromFoundation(_ any: Any) -> JSONValue? {
        switch any {
        case is NSNull: return .null
        case let string as String: return .string(string)
        case let decimal as NSDecimalNumber:
            if let i = Int64(decimal.description) { return .int(i) }
            return Double(decimal.description).map(JSONValue.double)
        case let number as NSNumber:
            switch String(cString: number.objCType) {
            case "c": return .bool(number.boolValue)
            case "d", "f": return .double(number.doubleValue)
            case "Q": return number.uint64Value > UInt64(Int64.max) ? .double(Double(number.uint64Value)) : .int(number.int64Value)
            default: return .int(number.int64Value)
            }
        case let array as [Any]:
            var elements: [JSONValue] = []
            for element in array {
                guard let value = fromFoundation(element) else { return nil }
                elements.append(value)
            }
            return .array(elements)
        case let object as [String: Any]:
            var members: [String: JSONValue] = [:]
            for (key, element) in object {
                guard let value = fromFoundation(element) else { return nil }
                members[key] = value
            }
            return .object(members)
        default:
            return nil
        }
    }
}
