/// Serializes ``JSONValue`` to JSON text, and offers the primitives to serialize other trees.
///
/// Output is compact by default; ``Options/pretty`` indents by two spaces and writes
/// `"key": value`, like `JSON.stringify(value, null, 2)`. Strings escape `"`, `\` and control
/// characters only; everything else is written as UTF-8. Numbers are written as JavaScript
/// writes them (see ``appendDouble(_:to:)``).
///
/// ```swift
/// let text = JSONWriter.string(["a": [1, 2.5]], options: [.pretty, .sortedKeys])
/// ```
package enum JSONWriter {
    /// How to lay out the text.
    package struct Options: OptionSet, Sendable {
        package let rawValue: Int
        package init(rawValue: Int) { self.rawValue = rawValue }

        /// Newlines and two-space indentation, `": "` between key and value.
        package static let pretty = Options(rawValue: 1)
        /// Object members ordered by key (`String` `<`), for deterministic output.
        package static let sortedKeys = Options(rawValue: 2)
    }

    /// The UTF-8 JSON text of `value`.
    package static func bytes(_ value: JSONValue, options: Options = []) -> [UInt8] {
        var out: [UInt8] = []
        self.append(value, to: &out, options: options)
        return out
    }

    /// The JSON text of `value`.
    package static func string(_ value: JSONValue, options: Options = []) -> String {
        String(decoding: self.bytes(value, options: options), as: UTF8.self)
    }

    /// Appends the JSON text of `value` to `out`; `level` is the indentation level the value
    /// starts at when pretty-printing.
    package static func append(_ value: JSONValue, to out: inout [UInt8], options: Options = [], level: Int = 0) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: b ? "true".utf8 : "false".utf8)
        case .int(let i): self.appendInt(i, to: &out)
        case .double(let d): self.appendDouble(d, to: &out)
        case .string(let s): self.appendString(s, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                if options.contains(.pretty) { self.appendNewline(level: level + 1, to: &out) }
                self.append(element, to: &out, options: options, level: level + 1)
            }
            if options.contains(.pretty), !elements.isEmpty { self.appendNewline(level: level, to: &out) }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            var first = true
            func member(_ key: String, _ value: JSONValue) {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                if options.contains(.pretty) { self.appendNewline(level: level + 1, to: &out) }
                self.appendString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                if options.contains(.pretty) { out.append(UInt8(ascii: " ")) }
                self.append(value, to: &out, options: options, level: level + 1)
            }
            if options.contains(.sortedKeys) {
                for (key, value) in members.sorted(by: { $0.key < $1.key }) { member(key, value) }
            } else {
                for (key, value) in members { member(key, value) }
            }
            if options.contains(.pretty), !members.isEmpty { self.appendNewline(level: level, to: &out) }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Appends a newline and `2 × level` spaces (for pretty-printing a tree of another kind).
    package static func appendNewline(level: Int, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\n"))
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
    }

    /// Appends `s` as a quoted JSON string: `"` and `\` are escaped, control characters become
    /// `\n`, `\t`, `\r`, `\b`, `\f` or `\u00XX`; all other characters are written as UTF-8.
    package static func appendString(_ s: String, to out: inout [UInt8]) {
        var s = s
        out.append(UInt8(ascii: "\""))
        s.withUTF8 { utf8 in
            var runStart = 0
            for i in utf8.indices {
                let b = utf8[i]
                if b >= 0x20, b != UInt8(ascii: "\""), b != UInt8(ascii: "\\") { continue }
                if runStart < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i])) }
                runStart = i + 1
                out.append(UInt8(ascii: "\\"))
                switch b {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(b)
                case 0x0A: out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(UInt8(ascii: "r"))
                case 0x09: out.append(UInt8(ascii: "t"))
                case 0x08: out.append(UInt8(ascii: "b"))
                case 0x0C: out.append(UInt8(ascii: "f"))
                default:  // other control characters: \u00XX, lowercase hex like JSON.stringify
                    let low = b & 0xF
                    out.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, 0x30 + (b >> 4), low < 10 ? 0x30 + low : 0x57 + low])
                }
            }
            if runStart < utf8.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Appends the decimal digits of `i` (with `-` when negative).
    package static func appendInt(_ i: Int64, to out: inout [UInt8]) {
        if i < 0 { out.append(UInt8(ascii: "-")) }
        self.appendDigits(i.magnitude, to: &out)
    }

    /// Appends the decimal digits of `value`.
    static func appendDigits(_ value: UInt64, to out: inout [UInt8]) {
        var count = 1
        var rest = value / 10
        while rest != 0 {
            count += 1
            rest /= 10
        }
        let start = out.count
        out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: count))
        out.withUnsafeMutableBufferPointer { buffer in
            var v = value
            var k = start + count - 1
            while v >= 10 {
                buffer[k] = UInt8(truncatingIfNeeded: v % 10) &+ 0x30
                v /= 10
                k -= 1
            }
            buffer[k] = UInt8(truncatingIfNeeded: v) &+ 0x30
        }
    }
}
