import CanopyCore
import Testing

@Suite("Reading JSON member by member")
struct JSONMemberReaderTests {
    /// Runs `body` with a reader of `text`, then checks that nothing follows what it read.
    static func read(_ text: String, _ body: (inout JSONMemberReader) throws -> Void) throws {
        var text = text
        try text.withUTF8 { bytes in
            var reader = JSONMemberReader(UnsafeRawBufferPointer(bytes))
            try body(&reader)
            try reader.end()
        }
    }

    /// Reads `text` as nested objects: `next` gives each member's key, and `member` reads its
    /// value, calling `nested` to read a value that is an object the same way.
    static func readObjects<Key>(
        _ text: String, next: (inout JSONMemberReader) throws -> Key?,
        member: @escaping (inout JSONMemberReader, Key, _ nested: (inout JSONMemberReader) throws -> Void) throws -> Void
    ) throws {
        try Self.read(text) { reader in
            func object(_ reader: inout JSONMemberReader) throws {
                try reader.openObject()
                while let key = try next(&reader) {
                    try member(&reader, key, object)
                }
            }
            try object(&reader)
        }
    }

    /// Reads `text` as nested objects, returning each key with what the reader saw: the string,
    /// the integer or the node of its value, chosen by the key's first letter (`s`, `i`, `n`,
    /// `o` for a nested object).
    static func walk(_ text: String) throws -> [String] {
        var seen: [String] = []
        try Self.readObjects(text, next: { try $0.nextKey() }) { reader, key, nested in
            switch key.first {
            case "s": seen.append("\(key)=\(try reader.string() ?? "nil")")
            case "i": seen.append("\(key)=\(try reader.int64().map(String.init) ?? "nil")")
            case "n": seen.append("\(key)=\(try reader.node().node.exportJSON.jsonString())")
            default:
                seen.append("\(key){")
                try nested(&reader)
                seen.append("}")
            }
        }
        return seen
    }

    @Test("keys in order, values as asked, nested objects")
    func members() throws {
        #expect(
            try Self.walk(#" { "s1" : "x\n" , "i1" : -42 , "o" : { "n1" : {"b":1,"a":[true]} , "o2" : {} } , "s2" : 3 } "#)
                == ["s1=x\n", "i1=-42", "o{", #"n1={"a":{"0":true},"b":1}"#, "o2{", "}", "}", "s2=nil"])
        // A value of another kind is read whole and answered with nil.
        #expect(
            try Self.walk(#"{"i":1.5,"i2":"7","s":{"a":[1,{"b":null}]},"i3":9223372036854775807}"#) == [
                "i=nil", "i2=nil", "s=nil", "i3=9223372036854775807",
            ])
        #expect(try Self.walk("{}") == [])
    }

    @Test("malformed input throws the parser's errors")
    func malformed() {
        let bad = [
            #"{"s":"x",}"#, #"{"s":"x" "t":"y"}"#, #"{"s":"x"} {}"#, #"{"s":"x""#, #"{"s" "x"}"#, #"["s"]"#, "", #"{"i":01}"#,
            #"{"n":{"a":}}"#, #"{"s":"\x"}"#,
        ]
        for text in bad {
            #expect(throws: DatabaseError.self, "\(text)") { try Self.walk(text) }
        }
    }

    /// The keys ``JSONMemberReader/nextShortKey()`` gives for `text` (a one-level object, or
    /// objects under `o`), values read whole.
    static func shortKeys(_ text: String) throws -> [UInt8] {
        var keys: [UInt8] = []
        try Self.readObjects(text, next: { try $0.nextShortKey() }) { reader, key, nested in
            keys.append(key)
            if key == UInt8(ascii: "o") { try nested(&reader) } else { _ = try reader.string() }
        }
        return keys
    }

    @Test("one-character keys read as bytes; any other key, or one written with an escape, as 0")
    func shortKeys() throws {
        #expect(
            try Self.shortKeys(#" { "t" : "d" , "o" : { "r":1, "ab":2, "\u0074":3, "\"":4, "é":5, "":6, "\\":7 }, "z":{"a":1} } "#)
                == Array("to".utf8) + [UInt8(ascii: "r"), 0, 0, 0, 0, 0, 0, UInt8(ascii: "z")])
        for text in [#"{"t" "d"}"#, #"{"t":1,}"#, #"{"t":1 "d":2}"#, #"{"t":1"#, #"{"t"}"#, #"{"t""#] {
            #expect(throws: DatabaseError.self, "\(text)") { try Self.shortKeys(text) }
        }
    }
}
