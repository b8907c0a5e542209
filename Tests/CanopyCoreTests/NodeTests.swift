import CanopyCore
import Testing

private func keys(_ path: String) -> ArraySlice<ChildKey> {
    path.split(separator: "/").map { ChildKey(String($0)) }[...]
}

private func leaf(_ json: JSONValue) -> Node { try! makeNode(json) }

@Suite("Node")
struct NodeTests {
    // MARK: - Array heuristic

    @Test(
        "plainJSON turns array-like children into arrays",
        arguments: [
            (["0": "a", "1": "b", "2": "c"], ["a", "b", "c"]),
            (["1": "a"], [.null, "a"]),
            (["2": "a"], ["2": "a"]),
            (["0": "a", "2": "c"], ["a", .null, "c"]),
            (["0": "a", "3": "d"], ["a", .null, .null, "d"]),
            (["0": "a", "1": "b", "5": "f"], ["a", "b", .null, .null, .null, "f"]),
            (["1": "a", "3": "b"], [.null, "a", .null, "b"]),
            (["-1": "x", "0": "y"], ["-1": "x", "0": "y"]),
            (["0": "x", "a": 1], ["0": "x", "a": 1]),
            (["0": ["0": "x"]], [["x"]]),
            (["3": 1, "03": 2], ["3": 1, "03": 2]),
            (["3024": 5], ["3024": 5]),
            (["100003354884401": "alpha"], ["100003354884401": "alpha"]),
            (["0": "alpha", "1": "bravo", "2": "charlie", "3": "delta", "4": "echo"], ["alpha", "bravo", "charlie", "delta", "echo"]),
            (["00": "a"], ["00": "a"]),
            (["0": "a", "01": "b"], ["0": "a", "01": "b"]),
            (["x": ["0": true, "1": false]], ["x": [true, false]]),
        ] as [(JSONValue, JSONValue)]
    )
    func arrayHeuristic(stored: JSONValue, expected: JSONValue) throws {
        let node = try makeNode(stored)
        #expect(node.plainJSON == expected)
        // The export format never produces arrays.
        #expect(node.exportJSON == stored)
    }

    @Test("keys with leading zeros are distinct children")
    func leadingZeroKeysAreDistinctChildren() throws {
        let node = try makeNode(["1": 1, "01": 2, "001": 3, "0001": 4])
        #expect(node.childCount == 4)
        #expect(node.childMap.keys.map(\.string) == ["1", "01", "001", "0001"])
        #expect(node.child("1").leafValue == .int(1))
        #expect(node.child("01").leafValue == .int(2))
        #expect(node.child("001").leafValue == .int(3))
        #expect(node.child("0001").leafValue == .int(4))
        #expect(node.plainJSON == ["1": 1, "01": 2, "001": 3, "0001": 4])
        // Leading zeros in a path address the exact key.
        var n = node
        n.set(.leaf(.int(20)), at: keys("01"))
        #expect(n.child("1").leafValue == .int(1))
        #expect(n.child("01").leafValue == .int(20))
        #expect(n.node(at: keys("001")).leafValue == .int(3))
    }

    @Test("writing an array with a null hole stores only the present indices")
    func arrayWithNullHoleStoresPresentIndices() throws {
        let node = try makeNode(["a", .null, "c"])
        #expect(node.childMap.keys.map(\.string) == ["0", "2"])
        #expect(node.plainJSON == ["a", .null, "c"])
        #expect(try makeNode(["a", "b"]).exportJSON == ["0": "a", "1": "b"])
        #expect(try makeNode([.null, .null]).isEmpty)
        #expect(try makeNode([]).isEmpty)
        #expect(try makeNode([[:], [], ["a": .null]]).isEmpty)
    }

    // MARK: - Export

    @Test("existence and children of basic nodes")
    func existenceAndChildrenOfBasicNodes() throws {
        #expect(try makeNode([:]).isEmpty)
        #expect(try makeNode([:]).plainJSON == .null)
        #expect(try !makeNode([:]).hasChildren)
        #expect(try !makeNode(5).isEmpty && !makeNode(5).hasChildren)
        #expect(try makeNode(["x": 5]).hasChildren)
        #expect(try makeNode([".priority": 1]).isEmpty)
        #expect(try makeNode(.null).isEmpty)
        #expect(try !makeNode(true).isEmpty)
        let n = try makeNode(["x": 5, "y": ["yy": 3, "yz": 4]])
        #expect(n.node(at: keys("x")).plainJSON == 5)
        #expect(n.node(at: keys("y")).plainJSON == ["yy": 3, "yz": 4])
        #expect(n.node(at: keys("y/yz")).plainJSON == 4)
        #expect(n.node(at: keys("z")).isEmpty)
        #expect(n.node(at: keys("x/y")).isEmpty)
        #expect(n.child("x").child("anything").isEmpty)
        #expect(n.node(at: keys("x/anything/at/all")).isEmpty)
        #expect(n.childCount == 2 && n.child("x").childCount == 0)
    }

    @Test("export format carries priorities")
    func exportFormatCarriesPriorities() throws {
        let a: JSONValue = ["foo": "bar", ".priority": 1]
        #expect(try makeNode(a).exportJSON == a)
        #expect(try makeNode(a).plainJSON == ["foo": "bar"])
        let b: JSONValue = ["foo": ["bar": [".value": 5, ".priority": 7], ".priority": "hi"]]
        #expect(try makeNode(b).exportJSON == b)
        #expect(try makeNode(b).plainJSON == ["foo": ["bar": 5]])
        let node = try makeNode(b)
        #expect(node.child("foo").priority == .string("hi"))
        #expect(node.node(at: keys("foo/bar")).priority == .int(7))
        #expect(node.node(at: keys("foo/bar")).leafValue == .int(5))
        #expect(try makeNode([".value": "e", ".priority": .null]).exportJSON == "e")
    }

    // MARK: - Priorities and empties

    @Test("priorities never stick to empty nodes")
    func prioritiesNeverStickToEmptyNodes() throws {
        #expect(Node.empty.withPriority(.string("prio")).isEmpty)
        var n = Node.empty
        n.set(.leaf(.string("prio")), at: keys(".priority"))
        #expect(n.isEmpty && n.priority == nil)

        var parent = try makeNode(["child": "value", ".priority": "prio"])
        #expect(parent.priority == .string("prio"))
        parent.set(.empty, at: keys("child"))
        #expect(parent.isEmpty)
        #expect(parent.priority == nil)

        #expect(try makeNode([".priority": "prio"]).isEmpty)
        #expect(try makeNode(["dummy": .null, ".priority": "prio"]).isEmpty)
        #expect(try makeNode(["dummy": .null, ".priority": "prio"]).priority == nil)
    }

    @Test("writing empty nodes under a leaf leaves it alone", arguments: [".priority", "child", "child/.priority"])
    func emptyWritesUnderLeafLeaveItAlone(path: String) {
        var n = Node.leaf(.string("value"))
        n.set(.empty, at: keys(path))
        #expect(n == .leaf(.string("value")))
        #expect(n.leafValue == .string("value"))
        #expect(!n.hasChildren)
    }

    @Test("writing under a prioritized leaf keeps the priority")
    func writeUnderLeafKeepsPriority() throws {
        var n = try makeNode([".value": "a", ".priority": 10])
        n.set(.leaf(.string("deeper")), at: keys("deeper"))
        #expect(n.exportJSON == ["deeper": "deeper", ".priority": 10])
        var m = try makeNode([".value": "a", ".priority": 10])
        m.setChild("x", to: .leaf(.int(1)))
        #expect(m.exportJSON == ["x": 1, ".priority": 10])
        var deep = try makeNode([".value": "a", ".priority": "p"])
        deep.set(.leaf(.bool(true)), at: keys("x/y/z"))
        #expect(deep.exportJSON == ["x": ["y": ["z": true]], ".priority": "p"])
    }

    @Test("removing the last child removes the parent and its priority")
    func removeLastChild() throws {
        var n = try makeNode(["a": ["b": 1, ".priority": 5], "c": 2])
        n.setChild("c", to: .empty)
        #expect(n.exportJSON == ["a": ["b": 1, ".priority": 5]])
        n.set(.empty, at: keys("a/b"))
        #expect(n.isEmpty)
        var m = try makeNode(["a": ["b": 1, ".priority": 5], ".priority": 9])
        m.setChild("a", to: .empty)
        #expect(m.isEmpty && m.priority == nil)
        // Removing a missing child changes nothing.
        var k = try makeNode(["a": 1])
        k.setChild("zz", to: .empty)
        k.set(.empty, at: keys("q/r/s"))
        #expect(k == (try makeNode(["a": 1])))
    }

    @Test("deep set creates intermediate children and removes emptied ancestors")
    func deepSet() throws {
        var n = Node.empty
        n.set(.leaf(.int(1)), at: keys("a/b/c/d"))
        #expect(n.exportJSON == ["a": ["b": ["c": ["d": 1]]]])
        n.set(.leaf(.int(2)), at: keys("a/x"))
        n.set(.empty, at: keys("a/b/c/d"))
        #expect(n.exportJSON == ["a": ["x": 2]])
        n.set(.empty, at: keys("a/x"))
        #expect(n.isEmpty)

        var m = try makeNode(["a": ["b": ["c": ["d": 1, ".priority": 1], ".priority": 2], ".priority": 3], "z": 0])
        m.set(.empty, at: keys("a/b/c/d"))
        #expect(m.exportJSON == ["z": 0])
        // Replacing a subtree by a leaf and a leaf by a subtree.
        m.set(.leaf(.string("s")), at: keys("z"))
        m.set(try makeNode(["p": ["q": 1]]), at: keys("z"))
        #expect(m.plainJSON == ["z": ["p": ["q": 1]]])
        m.set(.leaf(.int(3)), at: keys("z"))
        #expect(m.plainJSON == ["z": 3])
        // The root itself.
        m.set(.leaf(.int(4)), at: [])
        #expect(m == .leaf(.int(4)))
    }

    @Test("setting a priority through a .priority path sets only the priority")
    func priorityPath() throws {
        var n = try makeNode(["a": ["b": 1]])
        n.set(.leaf(.int(7)), at: keys("a/.priority"))
        #expect(n.exportJSON == ["a": ["b": 1, ".priority": 7]])
        n.set(.empty, at: keys("a/.priority"))
        #expect(n.exportJSON == ["a": ["b": 1]])
        n.set(.leaf(.string("p")), at: keys("missing/.priority"))
        #expect(n.exportJSON == ["a": ["b": 1]])
        n.set(.leaf(.int(1)), at: keys("a/b/.priority"))
        #expect(n.exportJSON == ["a": ["b": [".value": 1, ".priority": 1]]])
        // The count of prioritized children follows, so the default order stops being key order.
        #expect(!QueryIndex.priority.isKeyOrder(for: n.child("a")))
        n.set(.empty, at: keys("a/b/.priority"))
        #expect(QueryIndex.priority.isKeyOrder(for: n.child("a")))
    }

    @Test("prioritized-children bookkeeping follows every write")
    func prioritizedChildrenCount() throws {
        var n = try makeNode(["a": 1, "b": [".value": 2, ".priority": 1]])
        guard case .children(let c0) = n else {
            Issue.record("not children")
            return
        }
        #expect(c0.prioritizedChildren == 1)
        n.set(try makeNode([".value": 3, ".priority": 2]), at: keys("a"))
        n.setChild("c", to: try makeNode(["x": 1, ".priority": "p"]))
        guard case .children(let c1) = n else {
            Issue.record("not children")
            return
        }
        #expect(c1.prioritizedChildren == 3)
        n.set(.empty, at: keys("b"))
        n.set(.leaf(.int(5)), at: keys("a"))
        n.set(.empty, at: keys("c/x"))
        guard case .children(let c2) = n else {
            Issue.record("not children")
            return
        }
        #expect(c2.prioritizedChildren == 0)
        #expect(QueryIndex.priority.isKeyOrder(for: n))
    }

    // MARK: - Equality and identity

    @Test("equality is deep, numeric across Int64 and Double, and includes priorities")
    func equality() throws {
        #expect(Node.leaf(.int(1)) == .leaf(.double(1.0)))
        #expect(Node.leaf(.int(1)) != .leaf(.bool(true)))
        #expect(Node.leaf(.int(9_007_199_254_740_993)) != .leaf(.double(9_007_199_254_740_992.0)))
        #expect(try makeNode(["a": 1, "b": ["c": 2]]) == makeNode(["b": ["c": 2.0], "a": 1.0]))
        #expect(try makeNode(["a": 1]) != makeNode(["a": 1, ".priority": 1]))
        #expect(try makeNode(["a": 1, ".priority": 1]) == makeNode(["a": 1, ".priority": 1.0]))
        #expect(try makeNode(["a": 1, ".priority": 1]) != makeNode(["a": 1, ".priority": "1"]))
        #expect(try makeNode([".value": 1, ".priority": 1]) != makeNode(1))
        #expect(try makeNode(["a": 1]) != makeNode(["a": 1, "b": 2]))
        #expect(try makeNode(["a": 1]) != makeNode(["b": 1]))
        #expect(try makeNode(["a": ["b": 1]]) != makeNode(["a": ["b": 2]]))
        #expect(Node.empty == .empty)
        #expect(Node.empty != .leaf(.string("")))
        #expect(Node.leaf(.string("")) != .leaf(.int(0)))
    }

    @Test("copies share storage and later writes never change them")
    func identity() throws {
        let original = try makeNode(["a": ["b": 1], "c": 2])
        var copy = original
        if case .children(let x) = original, case .children(let y) = copy {
            #expect(x.map.isIdentical(to: y.map))
        }
        copy.set(.leaf(.int(3)), at: keys("a/b"))
        copy.set(.empty, at: keys("c"))
        #expect(original.exportJSON == ["a": ["b": 1], "c": 2])
        #expect(copy.exportJSON == ["a": ["b": 3]])
        if case .children(let x) = original, case .children(let y) = copy {
            #expect(!x.map.isIdentical(to: y.map))
        }
        // `setting` returns a new node and leaves the receiver alone.
        let other = original.setting(.leaf(.int(9)), at: keys("z"))
        #expect(other.child("z").leafValue == .int(9))
        #expect(original.child("z").isEmpty)
        // Unchanged subtrees stay shared.
        if case .children(let x) = original.child("a"), case .children(let y) = other.child("a") {
            #expect(x.map.isIdentical(to: y.map))
        } else {
            Issue.record("a is not a children node")
        }
    }

    @Test("Node.from builds from a children map and gives empty for no children")
    func fromChildren() {
        #expect(Node.from(children: SortedMap()).isEmpty)
        #expect(Node.from(children: SortedMap(), priority: .int(1)).priority == nil)
        let map = SortedMap(sortedKeys: ["a", "b"] as [ChildKey], values: [leaf(1), leaf([".value": 2, ".priority": 1])])
        let node = Node.from(children: map, priority: .string("p"))
        #expect(node.exportJSON == ["a": 1, "b": [".value": 2, ".priority": 1], ".priority": "p"])
        #expect(!QueryIndex.priority.isKeyOrder(for: node))
        #expect(node.withoutPriority.priority == nil)
        #expect(node.withoutPriority.exportJSON == ["a": 1, "b": [".value": 2, ".priority": 1]])
    }
}
