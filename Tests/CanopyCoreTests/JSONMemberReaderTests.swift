import CanopyCore
import Testing

@Suite("Reading JSON member by member")
struct JSONMemberReaderTests {
    /// Reads `text` as nested objects, returning each key with what the reader saw: the string,
    /// the integer or the node of its value, chosen by the key's first letter (`s`, `i`, `n`,
    /// `o` for a nested object).
    static func walk(_ text: String) throws -> [String] {
        var seen: [String] = []
        var text = text
        try text.withUTF8 { bytes in
            var reader = JSONMemberReader(UnsafeRawBufferPointer(bytes))
            func object() throws {
                try reader.openObject()
                while let key = try reader.nextKey() {
                    switch key.first {
                    case "s": seen.append("\(key)=\(try reader.string() ?? "nil")")
                    case "i": seen.append("\(key)=\(try reader.int64().map(String.init) ?? "nil")")
                    case "n": seen.append("\(key)=\(try reader.node().node.exportJSON.jsonString())")
                    default:
                        seen.append("\(key){")
                        try object()
                        seen.append("}")
                    }
                }
            }
            try object()
            try reader.end()
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
}
