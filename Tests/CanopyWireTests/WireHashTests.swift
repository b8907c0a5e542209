import CanopyCore
import CanopyWire
import Testing

@Suite("The Firebase data hash of a node")
struct WireHashTests {
    static func node(_ json: String) throws -> Node {
        var builder = NodeBuilder()
        return try JSONParser().parse(json, into: &builder).node
    }

    // The three values whose hashes the JS SDK computed in the captured conversations.
    @Test(
        "matches the hashes the JS SDK sends",
        arguments: [
            ("5", "w28swksk9+tXf5jEdS9R5oSFAv8="),
            (#"{"b":"x","a":1,"10":true,"2":false}"#, "j1UMxjbZyssb7A3c5BbZk64n6I8="),
            (#"{"p2":{"title":"b","starCount":9}}"#, "P3iHo43k4ppdsMnkaA0U0BUM9gU="),
        ])
    func knownHashes(json: String, hash: String) throws {
        #expect(try Self.node(json).wireHash == hash)
    }

    @Test("no data hashes to the empty string, and so does an object of nulls")
    func emptyHash() throws {
        #expect(Node.empty.wireHash == "")
        #expect(try Self.node(#"{"a":null}"#).wireHash == "")
    }

    @Test("an integer and the equal double hash alike (numbers are hashed as doubles)")
    func numbersAsDoubles() throws {
        #expect(try Self.node("5").wireHash == Self.node("5.0").wireHash)
        #expect(try Self.node(#"{"n":1}"#).wireHash == Self.node(#"{"n":1.0}"#).wireHash)
    }

    @Test("a priority changes the hash of a leaf and of an object")
    func priorityChangesHash() throws {
        #expect(try Self.node(#"{".value":5,".priority":1}"#).wireHash != Self.node("5").wireHash)
        #expect(try Self.node(#"{"a":1,".priority":"p"}"#).wireHash != Self.node(#"{"a":1}"#).wireHash)
    }

    // The canonical texts, hashed independently (Python's hashlib) to pin the exact format:
    // "priority:number:3ff0000000000000:number:4014000000000000" and, for the object with
    // prioritized children, children in priority order ("b" without priority first, then "a" with
    // priority 1, then "c" with priority "x").
    @Test(
        "leaf and child priorities are hashed in Firebase's format and priority order",
        arguments: [
            (#"{".value":5,".priority":1}"#, "oUSZ9VFwUrevB81K4PcN+7BHDJw="),
            (#"{"a":{".value":true,".priority":1},"b":"s","c":{".value":2,".priority":"x"}}"#, "leoRI3upqAdje8qyED6WgGIFOO4="),
        ])
    func prioritiesInOrder(json: String, hash: String) throws {
        #expect(try Self.node(json).wireHash == hash)
    }
}
