import CanopyCore
import CanopyTestSupport
import CanopyWire
import Testing

/// The server's reading of messages (``ClientMessage/reading(_:)``: puts and merges straight into
/// their nodes) must agree with the general reading (``ClientMessage/init(parsing:)`` then
/// ``ValueConverter`` or ``UpdateEntries``) on every message: the same request, the same values,
/// the same error.
@Suite("The server's fast reading of puts and merges agrees with the general reading")
struct ClientMessageReadingTests {
    /// Checks that, where the fast reading takes `text`, it gives what the general reading gives
    /// (the same request, the same converted value or entries); returns whether it took it.
    @discardableResult
    static func agree(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard let fast = ClientMessage.fastWrite(text) else { return false }
        let general = Result { () throws(ClientMessage.Malformed) in try ClientMessage(parsing: text) }
        guard case .success(let message) = general else {
            Issue.record("the fast reading accepted a message the general one refuses: \(text)", sourceLocation: sourceLocation)
            return true
        }
        #expect(message == fast, "\(text)", sourceLocation: sourceLocation)
        if case .request(_, .invalid) = message {
            Issue.record("the fast reading accepted data the general one refuses: \(text)", sourceLocation: sourceLocation)
        }
        if case .request(_, .put(_, let value, _)) = fast {
            #expect(value.node.childMap.checkInvariants(), sourceLocation: sourceLocation)
        }
        return true
    }

    @Test("the SDKs' puts and merges are read fast; everything unusual is read the general way")
    func vectors() {
        // As the JS SDK writes them: fast.
        let fast = [
            #"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/posts/p4","d":{"starCount":20,"title":"d"}}}}"#,
            #"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/counter","d":6,"h":"w28swksk9+tXf5jEdS9R5oSFAv8="}}}"#,
            #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/","d":{"a":[1,null,{"b":true}],"e":"\u00e9\n"}}}}"#,
            #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"a/b","d":null}}}"#,
            #" { "t" : "d" , "d" : { "r" : -7 , "a" : "p" , "b" : { "d" : { "x" : 1.5e3 } , "p" : "/x" } } } "#,
            #"{"t":"d","d":{"r":2,"a":"p","b":{"p":"/p","d":{"x":{"y":null},"z":{".priority":3,".value":"v"},".priority":"a"}}}}"#,
            // Repeated keys: the last one counts, a null one too.
            #"{"t":"d","d":{"r":2,"a":"p","b":{"p":"/p","d":{"a":1,"b":2,"a":null}}}}"#,
            #"{"t":"d","d":{"r":2,"a":"p","b":{"p":"/p","d":{"b":{"x":1},"a":null,"b":{"y":2}}}}}"#,
            // Merges, as `update()` sends them.
            #"{"t":"d","d":{"r":4,"a":"m","b":{"p":"/posts","d":{"p1/starCount":30,"p3":null,"p2":{"a":[1]}}}}}"#,
            #"{"t":"d","d":{"r":4,"a":"m","b":{"p":"/","d":{}}}}"#,
            #"{"t":"d","d":{"r":4,"a":"m","b":{"d":{"b/c":1,"b/d":2,"a":3},"p":"x"}}}"#,
            #"{"t":"d","d":{"r":4,"a":"m","b":{"p":"/posts","d":{"a//b/":1}}}}"#,
        ]
        for text in fast { #expect(Self.agree(text), "\(text)") }
        let general = [
            // Not a put, or a put in another shape.
            #"{"t":"c","d":{"t":"p","d":{}}}"#,
            #"{"t":"d","d":{"r":4,"a":"m","b":{"p":"/posts","d":{"p1/starCount":30,"p1":{}}}}}"#,
            #"{"t":"d","d":{"r":4,"a":"m","b":{"p":"/posts","d":{"a/b":1,"a/b/c":2}}}}"#,
            #"{"t":"d","d":{"r":4,"a":"m","b":{"p":"/posts","d":{"a":1,"a":2}}}}"#,
            #"{"t":"d","d":{"r":4,"a":"m","b":{"p":"/posts","d":{"a/.priority":1}}}}"#,
            #"{"t":"d","d":{"r":4,"a":"m","b":{"p":"/posts","d":{"":1}}}}"#,
            #"{"t":"d","d":{"r":4,"a":"m","b":{"p":"/posts","d":{"a#":1}}}}"#,
            #"{"t":"d","d":{"r":4,"a":"m","b":{"p":"/posts","d":{"a":{".sv":"timestamp"}}}}}"#,
            #"{"t":"d","d":{"r":4,"a":"m","b":{"p":"/posts","d":[1,2]}}}"#,
            #"{"t":"d","d":{"r":4,"a":"m","b":{"p":"/posts","d":{"a":1},"h":"x"}}}"#,
            #"{"t":"d","d":{"r":4,"a":"om","b":{"p":"/posts","d":{"a":1}}}}"#,
            #"{"d":{"r":3,"a":"p","b":{"p":"/a","d":1}},"t":"d"}"#,
            #"{"t":"d","d":{"a":"p","r":3,"b":{"p":"/a","d":1}}}"#,
            #"{"t":"d","d":{"r":3,"b":{"p":"/a","d":1},"a":"p"}}"#,
            #"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/a","d":1,"q":{}}}}"#,
            #"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/a","d":1,"d":2}}}"#,
            #"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/a","d":1}},"t":"x"}"#,
            #"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/a","d":1}},"x":1}"#,
            #"{"t":"d","d":{"r":3.0,"a":"p","b":{"p":"/a","d":1}}}"#,
            #"{"t":"d","d":{"r":"3","a":"p","b":{"p":"/a","d":1}}}"#,
            #"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/a","d":1,"h":5}}}"#,
            // Paths and data the general reading judges.
            #"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/posts/p1/.priority","d":7}}}"#,
            #"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/.info/connected","d":true}}}"#,
            #"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/a#b","d":1}}}"#,
            #"{"t":"d","d":{"r":5,"a":"p","b":{"p":5,"d":1}}}"#,
            #"{"t":"d","d":{"r":5,"a":"p","b":{"d":1}}}"#,
            #"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/a"}}}"#,
            #"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/a","d":{"t":{".sv":"timestamp"}}}}}"#,
            #"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/a","d":{"a.b":1}}}}"#,
            #"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/a","d":{"x":1,".value":2}}}}"#,
            #"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/a","d":{".priority":true,"x":1}}}}"#,
            #"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/\#(String(repeating: "k/", count: 40))","d":1}}}"#,
            #"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/a","d":\#(String(repeating: "{\"k\":", count: 40))1\#(String(repeating: "}", count: 40))}}}"#,
            // Malformed.
            #"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/a","d":1}}} x"#,
            #"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/a","d":1,}}}"#,
            #"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/a","d":01}}}"#,
            #"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/a","d":1}}"#,
            #"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/a" "d":1}}}"#,
            #"{"t":"d","d":{"r":5,"a":"p","b":[1]}}"#,
            #"["t","d"]"#,
            "",
        ]
        for text in general { #expect(!Self.agree(text), "\(text)") }
    }

    /// Random merges: keys that are paths (some overlapping, invalid or repeated), random data.
    @Test("random merges: both readings give the same request, entries or error")
    func randomMerges() {
        var rng = SeededGenerator(seed: 77)
        let keys = [
            "a", "b", "a/b", "a/c", "b/x/y", "0", "k#", "", "a//b", "é", "x/.priority", ".value", "l/" + String(repeating: "m", count: 700),
        ]
        let values = ["1", "null", "{}", #"{"n":1,"m":{"o":"p"}}"#, "[true]", #"{".sv":"timestamp"}"#, #"{"a.b":1}"#, #""s""#, "-2.5"]
        var fastCount = 0
        for _ in 0..<3000 {
            let members = (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                let key = keys[Int.random(in: 0..<(Int.random(in: 0..<4, using: &rng) == 0 ? keys.count : 5), using: &rng)]
                let value = values[Int.random(in: 0..<(Int.random(in: 0..<4, using: &rng) == 0 ? values.count : 5), using: &rng)]
                return "\"\(key)\":\(value)"
            }
            let path = ["/a", "/", "posts/p1", "/" + String(repeating: "q/", count: 30)].randomElement(using: &rng)!
            let text = #"{"t":"d","d":{"r":1,"a":"m","b":{"p":"\#(path)","d":{\#(members.joined(separator: ","))}}}}"#
            if Self.agree(text) { fastCount += 1 }
        }
        #expect(fastCount > 1000)
    }

    /// Random puts, mostly in the SDKs' shape, with random data (invalid keys, nulls, arrays,
    /// priorities, server values, deep nesting) and random changes to the shape.
    @Test("random puts: both readings give the same request, value or error")
    func randomPuts() {
        var rng = SeededGenerator(seed: 2026)
        let keys = ["a", "b", "0", "12", "-3", "k.x", "k#", "", "é", "\u{1F600}", ".priority", ".value", ".sv", "x/y", "~"]
        func data(_ depth: Int) -> String {
            switch Int.random(in: 0..<(depth > 4 ? 6 : 9), using: &rng) {
            case 0: return "null"
            case 1: return Bool.random(using: &rng) ? "true" : "false"
            case 2: return String(Int64.random(in: -1_000...1_000, using: &rng))
            case 3: return ["1.5", "-0.0", "1e400", "2.5e-3", "9007199254740993"][Int.random(in: 0..<5, using: &rng)]
            case 4, 5: return "\"" + keys.randomElement(using: &rng)! + "\""
            case 6: return "[" + (0..<Int.random(in: 0...3, using: &rng)).map { _ in data(depth + 1) }.joined(separator: ",") + "]"
            default:
                let members = (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                    let key = keys[Int.random(in: 0..<(Int.random(in: 0..<4, using: &rng) == 0 ? keys.count : 4), using: &rng)]
                    let value = key == ".sv" ? "\"timestamp\"" : data(depth + 1)
                    return "\"\(key)\":\(value)"
                }
                return "{" + members.joined(separator: ",") + "}"
            }
        }
        var fastCount = 0
        for _ in 0..<3000 {
            let path = ["/a", "/a/b", "/", "posts/p1", "/x/.priority", "/" + String(repeating: "long", count: 50)].randomElement(
                using: &rng)!
            var body = ["\"p\":\"\(path)\"", "\"d\":\(data(0))"]
            if Int.random(in: 0..<4, using: &rng) == 0 { body.append("\"h\":\"abc\"") }
            if Int.random(in: 0..<8, using: &rng) == 0 { body.shuffle(using: &rng) }
            if Int.random(in: 0..<16, using: &rng) == 0 { body.append("\"q\":{}") }
            var text = #"{"t":"d","d":{"r":\#(Int.random(in: 0...99, using: &rng)),"a":"p","b":{\#(body.joined(separator: ","))}}}"#
            if Int.random(in: 0..<16, using: &rng) == 0 { text.removeLast(Int.random(in: 1...3, using: &rng)) }
            if Self.agree(text) { fastCount += 1 }
        }
        // Most of them take the fast path, so the comparison means something.
        #expect(fastCount > 1000)
    }
}
