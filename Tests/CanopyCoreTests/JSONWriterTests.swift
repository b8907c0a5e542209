import CanopyCore
import CanopyTestSupport
import Testing

private func written(_ build: (inout [UInt8]) -> Void) -> String {
    var out: [UInt8] = []
    build(&out)
    return String(decoding: out, as: UTF8.self)
}

@Suite("JSON writer")
struct JSONWriterTests {
    static let sample: JSONValue = ["b": [1, 2.5, true, .null, "x", [:], []], "a": ["z": "é", "y": -3]]

    @Test("compact output with sorted keys")
    func compact() {
        #expect(JSONWriter.string(Self.sample, options: .sortedKeys) == #"{"a":{"y":-3,"z":"é"},"b":[1,2.5,true,null,"x",{},[]]}"#)
        #expect(Self.sample.jsonString() == #"{"a":{"y":-3,"z":"é"},"b":[1,2.5,true,null,"x",{},[]]}"#)
    }

    @Test("pretty output indents by two spaces like JSON.stringify(value, null, 2)")
    func pretty() {
        let expected = """
            {
              "a": {
                "y": -3,
                "z": "é"
              },
              "b": [
                1,
                2.5,
                true,
                null,
                "x",
                {},
                []
              ]
            }
            """
        #expect(Self.sample.jsonString(pretty: true) == expected)
        #expect(JSONValue.int(3).jsonString(pretty: true) == "3")
    }

    @Test("unsorted output holds every member once")
    func unsorted() throws {
        let value: JSONValue = ["k1": 1, "k2": 2, "k3": 3, "k4": [4]]
        let text = JSONWriter.string(value)
        #expect(try JSONValue(parsing: text) == value)
        #expect(text.utf8.count == #"{"k1":1,"k2":2,"k3":3,"k4":[4]}"#.utf8.count)
    }

    @Test("strings escape quotes, backslashes and control characters, and keep other characters as UTF-8")
    func strings() {
        let text = written { JSONWriter.appendString("a\"b\\c/\n\t\r\u{8}\u{C}\u{1}\u{1F}\u{0}é😀\u{7F}\u{2028}", to: &$0) }
        #expect(text == "\"a\\\"b\\\\c/\\n\\t\\r\\b\\f\\u0001\\u001f\\u0000é😀\u{7F}\u{2028}\"")
        #expect(written { JSONWriter.appendString("", to: &$0) } == #""""#)
        #expect(written { JSONWriter.appendString("plain", to: &$0) } == #""plain""#)
    }

    @Test(
        "integers",
        arguments: [
            (Int64(0), "0"), (7, "7"), (-7, "-7"), (1_000_000, "1000000"),
            (Int64.max, "9223372036854775807"), (Int64.min, "-9223372036854775808"),
        ])
    func integers(value: Int64, expected: String) {
        #expect(written { JSONWriter.appendInt(value, to: &$0) } == expected)
    }

    @Test(
        "doubles are written like JavaScript writes numbers",
        arguments: [
            (5.0, "5"), (-0.0, "0"), (0.0, "0"), (100.0, "100"), (-1.5, "-1.5"), (0.1, "0.1"), (0.5, "0.5"),
            (123.456, "123.456"), (1e20, "100000000000000000000"), (1e21, "1e+21"), (1.5e-7, "1.5e-7"),
            (1e-7, "1e-7"), (0.000001, "0.000001"), (0.0000015, "0.0000015"), (1.2345678901234568e20, "123456789012345680000"),
            (1.2345678901234568e21, "1.2345678901234568e+21"), (1_152_921_504_606_846_976, "1152921504606846976"),
            (-9_223_372_036_854_774_784, "-9223372036854774784"), (9_223_372_036_854_775_808, "9223372036854776000"),
            (-9_223_372_036_854_775_808, "-9223372036854776000"), (1e19, "10000000000000000000"),
            (9_007_199_254_740_992, "9007199254740992"), (9_007_199_254_740_991, "9007199254740991"),
            (Double.greatestFiniteMagnitude, "1.7976931348623157e+308"), (Double.leastNonzeroMagnitude, "5e-324"),
            (-2.2250738585072014e-308, "-2.2250738585072014e-308"), (0.30000000000000004, "0.30000000000000004"),
            (1e16, "10000000000000000"), (123e-20, "1.23e-18"), (1.7e300, "1.7e+300"), (4.35, "4.35"),
        ]
    )
    func doubles(value: Double, expected: String) {
        #expect(written { JSONWriter.appendDouble(value, to: &$0) } == expected)
    }

    @Test("doubles written from random bit patterns read back bit for bit")
    func doubleRoundTrip() throws {
        var random = JSONTestRandom(seed: 11)
        for _ in 0..<20_000 {
            let d = Double(bitPattern: random.next())
            guard d.isFinite, d != 0 else { continue }
            let text = written { JSONWriter.appendDouble(d, to: &$0) }
            #expect(Double(text)?.bitPattern == d.bitPattern, "\(d) written as \(text)")
            let parsed = try JSONValue(parsing: text)
            #expect(parsed.doubleValue?.bitPattern == d.bitPattern || parsed == .double(d), "\(text) → \(parsed)")
        }
    }

    @Test("random values survive write → parse, compact and pretty, sorted and not", arguments: [0, 1, 2, 3])
    func randomRoundTrip(layout: Int) throws {
        var random = JSONTestRandom(seed: UInt64(100 + layout))
        let options: JSONWriter.Options = [[], [.pretty], [.sortedKeys], [.pretty, .sortedKeys]][layout]
        for _ in 0..<300 {
            let value = RandomJSONValue.value(depth: 4, using: &random)
            let bytes = JSONWriter.bytes(value, options: options)
            #expect(try JSONValue(parsing: bytes) == value, "\(String(decoding: bytes, as: UTF8.self)) from \(value)")
        }
    }
}

/// The shared seeded generator, under the name these tests use.
typealias JSONTestRandom = SeededGenerator

/// Random ``JSONValue`` trees with awkward numbers and strings.
enum RandomJSONValue {
    static func value(depth: Int, using random: inout JSONTestRandom) -> JSONValue {
        switch Int.random(in: 0..<(depth > 0 ? 9 : 7), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .int(self.int(using: &random))
        case 3, 4: return .double(self.double(using: &random))
        case 5, 6: return .string(self.string(using: &random))
        case 7:
            return .array((0..<Int.random(in: 0...5, using: &random)).map { _ in self.value(depth: depth - 1, using: &random) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...5, using: &random) {
                members[self.string(using: &random)] = self.value(depth: depth - 1, using: &random)
            }
            return .object(members)
        }
    }

    static func int(using random: inout JSONTestRandom) -> Int64 {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return [Int64.max, Int64.min, 0, -1, 1 << 53, -(1 << 53) - 1][Int.random(in: 0..<6, using: &random)]
        case 1: return Int64(bitPattern: random.next())
        default: return Int64.random(in: -100_000...100_000, using: &random)
        }
    }

    static func double(using random: inout JSONTestRandom) -> Double {
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            while true {
                let d = Double(bitPattern: random.next())
                if d.isFinite { return d }
            }
        case 1:
            return [0.1, -0.0, 1e21, 1e-7, .leastNonzeroMagnitude, 1.7976931348623157e308, 0.5, 1e300][
                Int.random(in: 0..<8, using: &random)]
        case 2: return Double(Int.random(in: -1000...1000, using: &random)) / 8
        default: return Double.random(in: -1e6...1e6, using: &random)
        }
    }

    static func string(using random: inout JSONTestRandom) -> String {
        let pieces = [
            "a", "key", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "日本", "🎉", "\u{FFFF}",
            "\u{10FFFF}", "\u{2028}", "text with spaces", "-Nabc_123", "0",
        ]
        var s = ""
        for _ in 0..<Int.random(in: 0...6, using: &random) { s += pieces[Int.random(in: 0..<pieces.count, using: &random)] }
        return s
    }
}
