import CanopyCore
import Testing

/// ``CanopyCore/Node/shallow``, the value of a REST `shallow=true` read, against the children as
/// the node lists them.
@Suite("Shallow nodes")
struct NodeShallowTests {
    @Test("each child true, the priority dropped; leaves and empty nodes as they are", arguments: [0, 1, 5, 32, 33, 100, 2000])
    func shallow(_ count: Int) throws {
        var object: [String: JSONValue] = [".priority": 7]
        for i in 0..<count { object["k\(i)"] = i % 3 == 0 ? ["deep": ["x": .int(Int64(i))]] : .int(Int64(i)) }
        let node = try makeNode(.object(object))
        let shallow = node.shallow
        if count == 0 {
            #expect(shallow.exportJSON == node.exportJSON)
            return
        }
        var expected: [String: JSONValue] = [:]
        for i in 0..<count { expected["k\(i)"] = true }
        #expect(shallow.exportJSON == .object(expected))
        #expect(shallow.priority == nil)
        #expect(shallow.childCount == count)
    }

    @Test("leaves and the empty node are their own shallow value")
    func leaves() throws {
        for value: JSONValue in ["s", 1, true, [".value": "x", ".priority": 2]] {
            let node = try makeNode(value)
            #expect(node.shallow.exportJSON == node.exportJSON)
        }
        #expect(Node.empty.shallow.isEmpty)
    }
}
