import CanopyRules
import CanopyTestSupport
import Testing

@Suite("Fuzz entry point")
struct FuzzEntryTests {
    static let seeds = [
        #"{"rules": {".read": "auth != null", "$a": {".write": "newData.val() == $a", ".validate": "newData.isString()"}}}"#,
        #"{"rules": {"a": {"b": {".read": true}}, ".write": "root.child('a').exists()"}}"#,
        "{\"rules\": {\n\".read\": \"auth.uid.matches(/^a|b$/)\"}}",
        "{\"rules\": /* unterminated",
        "",
        "{\"rules\": {\".read\": \"(((((\"}}",
        "\u{0}\u{FFFF}{\"",
    ]

    @Test("the seeds and their random mutations keep every property")
    func mutations() {
        var generator = SeededGenerator(seed: 17)
        for seed in Self.seeds {
            #expect(RulesFuzzing.check(Array(seed.utf8)) == nil, "\(seed)")
            for _ in 0..<200 {
                var bytes = Array(seed.utf8)
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    let choice = Int.random(in: 0..<3, using: &generator)
                    let index = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &generator)
                    switch choice {
                    case 0 where !bytes.isEmpty: bytes.remove(at: index)
                    case 1: bytes.insert(Array("{}[]\"$.:,/*\n'()!=&|".utf8).randomElement(using: &generator)!, at: index)
                    default: if !bytes.isEmpty { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
                    }
                }
                let failure = RulesFuzzing.check(bytes)
                #expect(failure == nil, "\(failure ?? "") for \(String(decoding: bytes, as: UTF8.self))")
            }
        }
    }
}
