/// A strict RFC 8259 JSON parser that hands what it reads to a ``JSONBuilder``.
///
/// - Accepts exactly one JSON value surrounded by optional whitespace (space, tab, LF, CR).
/// - Rejects comments, trailing commas, single quotes, leading zeros, `+1`, `.5`, `1.`, `NaN`,
///   `Infinity`, unescaped control characters, invalid escapes, lone surrogates in `\u` escapes,
///   invalid UTF-8 and anything after the value.
/// - Integer literals that fit `Int64` go to ``JSONBuilder/int(_:)``; every other number goes to
///   ``JSONBuilder/double(_:)``, correctly rounded. A number too large for `Double` is an error.
/// - Nesting deeper than ``maxDepth`` containers is an error; the parser keeps its own stack, so
///   deep input never overflows the thread's stack.
///
/// Errors are ``DatabaseError`` values with code ``DatabaseError/Code/invalidJSON`` and a message
/// like `Invalid JSON at line 3, column 14 (byte 52): expected ',' or '}' after object member`
/// (line and column count from 1, columns in Unicode scalars; the byte offset counts from 0).
/// Errors thrown by the builder pass through unchanged.
///
/// ```swift
/// var builder = JSONValueBuilder()
/// let value = try JSONParser().parse(#"{"a": [1, 2.5]}"#, into: &builder)
/// ```
package struct JSONParser: Sendable {
    /// The deepest nesting of arrays and objects accepted; `[[1]]` has depth 2.
    package var maxDepth: Int

    /// Creates a parser accepting at most `maxDepth` nested containers.
    package init(maxDepth: Int = 1000) {
        self.maxDepth = maxDepth
    }

    /// Parses the UTF-8 text `text`.
    package func parse<B: JSONBuilder>(_ text: String, into builder: inout B) throws -> B.Value {
        var text = text
        return try text.withUTF8 { try self.parse(UnsafeRawBufferPointer($0), into: &builder) }
    }

    /// Parses the UTF-8 bytes `bytes`.
    package func parse<B: JSONBuilder>(_ bytes: [UInt8], into builder: inout B) throws -> B.Value {
        try bytes.withUnsafeBytes { try self.parse($0, into: &builder) }
    }

    /// Parses the UTF-8 bytes in `bytes`, which must stay valid for the duration of the call.
    package func parse<B: JSONBuilder>(_ bytes: UnsafeRawBufferPointer, into builder: inout B) throws -> B.Value {
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            throw DatabaseError(.invalidJSON, "Invalid JSON at line 1, column 1 (byte 0): empty input")
        }
        var reader = JSONReader(base: base.assumingMemoryBound(to: UInt8.self), end: bytes.count)
        reader.skipWhitespace()
        if reader.pos == reader.end { throw reader.error("empty input", at: reader.pos) }
        let value = try self.parseValue(&reader, into: &builder)
        reader.skipWhitespace()
        if reader.pos < reader.end {
            throw reader.error("unexpected \(reader.describe(at: reader.pos)) after the JSON value", at: reader.pos)
        }
        return value
    }

    /// Reads one value, iteratively: open containers live on explicit stacks indexed by depth,
    /// whose scratch buffers are reused by every container at that depth.
    func parseValue<B: JSONBuilder>(_ r: inout JSONReader, into builder: inout B) throws -> B.Value {
        var depth = 0
        var isObject: [Bool] = []
        var keys: [String] = []
        var elements: [[B.Value]] = []
        var members: [[(key: String, value: B.Value)]] = []

        var value: B.Value
        parsing: while true {
            r.skipWhitespace()
            guard r.pos < r.end else { throw r.error("unexpected end of input, expected a value", at: r.pos) }
            let byte = r.base[r.pos]
            switch byte {
            case UInt8(ascii: "\""):
                value = try builder.string(r.readString())
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let object = byte == UInt8(ascii: "{")
                guard depth < self.maxDepth else {
                    throw r.error("nesting deeper than \(self.maxDepth) levels", at: r.pos)
                }
                r.pos += 1
                r.skipWhitespace()
                if r.pos < r.end, r.base[r.pos] == (object ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    r.pos += 1
                    if object {
                        var none: [(key: String, value: B.Value)] = []
                        value = try builder.object(&none)
                    } else {
                        var none: [B.Value] = []
                        value = try builder.array(&none)
                    }
                } else {
                    if isObject.count == depth {
                        isObject.append(object)
                        keys.append("")
                        elements.append([])
                        members.append([])
                    } else {
                        isObject[depth] = object
                    }
                    if object { keys[depth] = try r.readKey() }
                    depth += 1
                    continue parsing
                }
            case UInt8(ascii: "t"):
                try r.readLiteral("true")
                value = try builder.bool(true)
            case UInt8(ascii: "f"):
                try r.readLiteral("false")
                value = try builder.bool(false)
            case UInt8(ascii: "n"):
                try r.readLiteral("null")
                value = try builder.null()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                switch try r.readNumber() {
                case .int(let i): value = try builder.int(i)
                case .double(let d): value = try builder.double(d)
                }
            case UInt8(ascii: "]") where depth > 0 && !isObject[depth - 1]:
                throw r.error("trailing comma before ']'", at: r.pos)
            default:
                throw r.error("unexpected \(r.describe(at: r.pos)), expected a value", at: r.pos)
            }

            // A value is complete: add it to the open containers, closing those that end here.
            while depth > 0 {
                let d = depth - 1
                r.skipWhitespace()
                let next: UInt8? = r.pos < r.end ? r.base[r.pos] : nil
                if isObject[d] {
                    members[d].append((keys[d], value))
                    if next == UInt8(ascii: ",") {
                        r.pos += 1
                        keys[d] = try r.readKey()
                        continue parsing
                    } else if next == UInt8(ascii: "}") {
                        r.pos += 1
                        value = try builder.object(&members[d])
                        members[d].removeAll(keepingCapacity: true)
                        depth = d
                    } else {
                        throw r.error(r.expectation("',' or '}' after object member"), at: r.pos)
                    }
                } else {
                    elements[d].append(value)
                    if next == UInt8(ascii: ",") {
                        r.pos += 1
                        continue parsing
                    } else if next == UInt8(ascii: "]") {
                        r.pos += 1
                        value = try builder.array(&elements[d])
                        elements[d].removeAll(keepingCapacity: true)
                        depth = d
                    } else {
                        throw r.error(r.expectation("',' or ']' after array element"), at: r.pos)
                    }
                }
            }
            return value
        }
    }
}
