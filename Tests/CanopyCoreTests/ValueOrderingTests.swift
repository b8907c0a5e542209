import CanopyCore
import CanopyTestSupport
import Testing

/// Builds a node from JSON with the write validation rules.
func makeNode(_ json: JSONValue, at location: [String] = []) throws -> Node {
    var converter = try ValueConverter(function: "set", location: location)
    return try converter.convert(json).node
}

/// The children of `node` sorted by `index` (with `QueryIndex.compare`), as keys.
private func sortedKeys(_ node: Node, by index: QueryIndex) -> [String] {
    node.childMap.map { (key: $0.key, node: $0.value) }.sorted { index.compare($0, $1) < 0 }.map(\.key.string)
}

/// Children in `index` order, as (key, node) pairs.
private func sortedChildren(_ node: Node, by index: QueryIndex) -> [(key: ChildKey, node: Node)] {
    node.childMap.map { (key: $0.key, node: $0.value) }.sorted { index.compare($0, $1) < 0 }
}

private func child(_ path: String) -> QueryIndex { .child(path.split(separator: "/").map { ChildKey(String($0)) }) }

/// `key:value:` pairs in default order, as the datasnapshot tests print them.
private func forEachString(_ node: Node) -> String {
    var ordered = OrderedChildren(node: node, index: .priority)
    return ordered.all().map { "\($0.key):\($0.node.plainJSON.int64Value.map(String.init) ?? "?"):" }.joined()
}

/// Checks that `index` orders the children `ordered` (given as (key, node)) exactly as listed,
/// pairwise and after shuffling, with antisymmetric comparisons.
private func expectOrder(_ ordered: [(key: ChildKey, node: Node)], by index: QueryIndex, sourceLocation: SourceLocation = #_sourceLocation)
{
    for i in ordered.indices {
        #expect(index.compare(ordered[i], ordered[i]) == 0, sourceLocation: sourceLocation)
        for j in ordered.indices where i < j {
            let c = index.compare(ordered[i], ordered[j])
            #expect(c < 0, "\(index): \(ordered[i].key) before \(ordered[j].key)", sourceLocation: sourceLocation)
            #expect(index.compare(ordered[j], ordered[i]) == -c, sourceLocation: sourceLocation)
        }
    }
    var rng = SeededGenerator(seed: UInt64(ordered.count))
    for _ in 0..<5 {
        let sorted = ordered.shuffled(using: &rng).sorted { index.compare($0, $1) < 0 }
        #expect(sorted.map(\.key) == ordered.map(\.key), sourceLocation: sourceLocation)
    }
}

@Suite("Value, priority and default ordering")
struct ValueOrderingTests {
    static let nuggets: JSONValue = [
        "alex": ["nuggets": 60], "rob": ["nuggets": 56], "vassili": ["nuggets": 55.5], "tony": ["nuggets": 52],
        "greg": ["nuggets": 52],
    ]

    @Test("orderByChild('nuggets') order and previous keys")
    func orderByChildOrderAndPreviousKeys() throws {
        let node = try makeNode(Self.nuggets)
        let index = child("nuggets")
        #expect(sortedKeys(node, by: index) == ["greg", "tony", "vassili", "rob", "alex"])
        var ordered = OrderedChildren(node: node, index: index)
        #expect(ordered.all().map(\.key.string) == ["greg", "tony", "vassili", "rob", "alex"])
        let previous = ["greg", "tony", "vassili", "rob", "alex"].map { ordered.previousKey(before: ChildKey($0)) }
        #expect(previous == [nil, "greg", "tony", "vassili", "rob"])
    }

    @Test("orderByValue order and previous keys")
    func orderByValueOrderAndPreviousKeys() throws {
        let node = try makeNode(["alex": 60, "rob": 56, "vassili": 55.5, "tony": 52, "greg": 52])
        #expect(sortedKeys(node, by: .value) == ["greg", "tony", "vassili", "rob", "alex"])
        var ordered = OrderedChildren(node: node, index: .value)
        let previous = ["greg", "tony", "vassili", "rob", "alex"].map { ordered.previousKey(before: ChildKey($0)) }
        #expect(previous == [nil, "greg", "tony", "vassili", "rob"])
    }

    @Test("default order without priorities is key order")
    func defaultOrderWithoutPrioritiesIsKeyOrder() throws {
        let node = try makeNode(["a": 1, "z": 26, "m": 13, "n": 14, "c": 3, "b": 2, "e": 5])
        #expect(forEachString(node) == "a:1:b:2:c:3:e:5:m:13:n:14:z:26:")
        #expect(sortedKeys(node, by: .priority) == ["a", "b", "c", "e", "m", "n", "z"])
        #expect(QueryIndex.priority.isKeyOrder(for: node))
    }

    @Test("numeric priorities, as numbers and as strings", arguments: [false, true])
    func numericPriorities(asStrings: Bool) throws {
        let data: [(String, Int64, Int64)] = [
            ("a", 1, 26), ("z", 26, 1), ("m", 13, 14), ("n", 14, 12), ("c", 3, 24), ("b", 2, 25), ("e", 5, 22),
        ]
        var object: [String: JSONValue] = [:]
        for (key, value, priority) in data {
            object[key] = [".value": .int(value), ".priority": asStrings ? .string(String(priority)) : .int(priority)]
        }
        let node = try makeNode(.object(object))
        #expect(!QueryIndex.priority.isKeyOrder(for: node))
        #expect(forEachString(node) == "z:26:n:14:m:13:e:5:c:3:b:2:a:1:")
    }

    @Test("alphabetic priorities")
    func alphabeticPriorities() throws {
        let data: [(String, Int64, String)] = [
            ("a", 1, "first"), ("z", 26, "second"), ("m", 13, "third"), ("n", 14, "fourth"), ("c", 3, "fifth"), ("b", 2, "sixth"),
            ("e", 5, "seventh"),
        ]
        var object: [String: JSONValue] = [:]
        for (key, value, priority) in data { object[key] = [".value": .int(value), ".priority": .string(priority)] }
        let node = try makeNode(.object(object))
        #expect(forEachString(node) == "c:3:a:1:n:14:z:26:e:5:b:2:m:13:")
        var ordered = OrderedChildren(node: node, index: .priority)
        #expect(
            ordered.all().compactMap { $0.node.priority?.jsonValue.stringValue } == [
                "fifth", "first", "fourth", "second", "seventh", "sixth", "third",
            ])
        #expect(node.childCount == 7)
    }

    @Test("no priority, then numbers ascending, then strings; ties by key")
    func priorityOrderNoneThenNumbersThenStrings() throws {
        let priorities: [(String, JSONValue)] = [
            ("noPriorityA", .null), ("noPriorityB", .null), ("noPriorityC", .null), ("num10", 24), ("num20", 123), ("num30", 300),
            ("num40", 500), ("num41", 500), ("num42", 500), ("num50", 4000), ("num60", 4000.001), ("num70", 4000.01),
            ("num80", 4000.1), ("alpha10", "0horse"), ("alpha20", "horse"), ("alpha30", "tree"), ("alpha40", "zed"),
            ("alpha41", "zed"), ("alpha42", "zed"),
        ]
        var object: [String: JSONValue] = [:]
        for (key, priority) in priorities { object[key] = ["name": .string(key), ".priority": priority] }
        let node = try makeNode(.object(object))
        #expect(sortedKeys(node, by: .priority) == priorities.map(\.0))
        var ordered = OrderedChildren(node: node, index: .priority)
        #expect(ordered.all().map(\.key.string) == priorities.map(\.0))
        expectOrder(sortedChildren(node, by: .priority), by: .priority)
    }

    @Test("orderByChild on a shallow and a deep path over push-ID keys", arguments: ["nuggets", "deep/nuggets"])
    func orderByChildOnShallowAndDeepPath(path: String) throws {
        let generator = PushIDGenerator()
        var object: [String: JSONValue] = [:]
        var now: Int64 = 1_700_000_000_000
        for (name, nuggets) in [("Andrew", 35), ("Rob", 40), ("Greg", 38)] as [(String, Int64)] {
            let leaf: JSONValue = path == "nuggets" ? ["nuggets": .int(nuggets)] : ["deep": ["nuggets": .int(nuggets)]]
            var user = leaf.objectValue!
            user["name"] = .string(name)
            object[generator.next(now: now)] = .object(user)
            now += 1
        }
        let node = try makeNode(.object(object))
        let names = sortedChildren(node, by: child(path)).map { $0.node.child("name").leafValue?.jsonValue.stringValue }
        #expect(names == ["Andrew", "Greg", "Rob"])
        // Default order is push order.
        let pushOrder = sortedChildren(node, by: .priority).map { $0.node.child("name").leafValue?.jsonValue.stringValue }
        #expect(pushOrder == ["Andrew", "Rob", "Greg"])
    }

    static let mixedByValue: JSONValue = [
        "f": false, "t": true, "im1": -1, "d1": 1.0, "i1": 1, "d15": 1.5, "i10": 10, "s3": "", "s2": "B", "s": "a",
        "o": ["x": 1], "o2": ["a": 0],
    ]
    static let mixedByChild: JSONValue = [
        "a": ["v": "x"], "b": ["v": true], "c": [:], "d": ["v": 3], "e": ["v": false], "f": ["v": ["deep": 1]], "g": ["v": -1],
        "h": "leaf", "i": ["v": "B"],
    ]

    @Test("orderByValue over mixed types")
    func orderByValueOverMixedTypes() throws {
        let node = try makeNode(Self.mixedByValue)
        #expect(sortedKeys(node, by: .value) == ["f", "t", "im1", "d1", "i1", "d15", "i10", "s3", "s2", "s", "o", "o2"])
        expectOrder(sortedChildren(node, by: .value), by: .value)
    }

    @Test("orderByChild('v') over mixed types, with startAt(false).endAt(true) and equalTo(null)")
    func orderByChildOverMixedTypesWithRanges() throws {
        let node = try makeNode(Self.mixedByChild)
        #expect(node.child("c").isEmpty, "{} is empty, so c does not exist")
        let index = child("v")
        let sorted = sortedChildren(node, by: index)
        #expect(sorted.map(\.key.string) == ["h", "e", "b", "g", "d", "i", "a", "f"])
        expectOrder(sorted, by: index)
        let low = Node.leaf(.bool(false))
        let high = Node.leaf(.bool(true))
        let ranged = sorted.filter {
            let v = index.sortValue(of: $0.node)
            return index.compareSortValues(v, low) >= 0 && index.compareSortValues(v, high) <= 0
        }
        #expect(ranged.map(\.key.string) == ["e", "b"])
        let nulls = sorted.filter { index.compareSortValues(index.sortValue(of: $0.node), .empty) == 0 }
        #expect(nulls.map(\.key.string) == ["h"])
    }

    @Test("value comparison of Hangul strings is antisymmetric")
    func hangulValueComparisonIsAntisymmetric() {
        let x = (key: ChildKey("k"), node: Node.leaf(.string("유주연")))
        let y = (key: ChildKey("k"), node: Node.leaf(.string("윤규완오빠")))
        let c = QueryIndex.value.compare(x, y)
        #expect(c != 0)
        #expect(QueryIndex.value.compare(y, x) == -c)
        #expect(c < 0)
    }

    @Test("key index ignores priorities; default order uses them")
    func keyIndexIgnoresPriorities() throws {
        let node = try makeNode([
            "a": [".value": 10, ".priority": 10], "b": [".value": 5, ".priority": 5], "c": [".value": 20, ".priority": 20],
            "d": [".value": 7, ".priority": 7], "e": [".value": 30, ".priority": 30], "f": [".value": 8, ".priority": 8],
        ])
        #expect(sortedKeys(node, by: .priority) == ["b", "d", "f", "a", "c", "e"])
        let byKey = sortedKeys(node, by: .key)
        #expect(byKey == ["a", "b", "c", "d", "e", "f"])
        #expect(QueryIndex.key.isKeyOrder(for: node))
        #expect(byKey.filter { ChildKey($0) >= "c" } == ["c", "d", "e", "f"])
        #expect(Array(byKey.suffix(5)) == ["b", "c", "d", "e", "f"])
        #expect(Array(byKey.filter { ChildKey($0) >= "b" }.prefix(2)) == ["b", "c"])
    }

    @Test("predecessor by key and by priority")
    func predecessorByKeyAndByPriority() throws {
        let plain = try makeNode(["d": 1, "a": 1, "g": 1, "c": 1, "e": 1])
        var byKey = OrderedChildren(node: plain, index: .priority)
        let keys = ["a", "c", "d", "e", "g"]
        #expect(keys.map { byKey.previousKey(before: ChildKey($0)) } == [nil, "a", "c", "d", "e"])
        #expect(keys.map { plain.childMap.predecessor(of: ChildKey($0))?.key.string } == [nil, "a", "c", "d", "e"])

        let prioritized = try makeNode([
            "d": [".value": 1, ".priority": 22], "a": [".value": 1, ".priority": 25], "g": [".value": 1, ".priority": 19],
            "c": [".value": 1, ".priority": 23], "e": [".value": 1, ".priority": 21],
        ])
        var byPriority = OrderedChildren(node: prioritized, index: .priority)
        #expect(keys.map { byPriority.previousKey(before: ChildKey($0)) } == ["c", "d", "e", "g", nil])
        #expect(byPriority.all().map(\.key.string) == ["g", "e", "d", "c", "a"])
    }

    // MARK: - Type order on mixed data, for every index

    /// Children whose *values* are listed in value order (null, false, true, numbers, strings,
    /// objects), ties broken by key.
    static let mixedValues: [(String, JSONValue)] = [
        ("false", false), ("true", true),
        ("n01", .double(-1e300)), ("n02", .int(Int64.min)), ("n03", .double(-9_223_372_036_854_775_808.0)),
        ("n04", .int(-9_007_199_254_740_993)), ("n05", .double(-9_007_199_254_740_992.0)), ("n06", .int(-1)),
        ("n07", .double(-0.5)), ("n08", .double(-0.0)), ("n09", .int(0)), ("n10", .double(0.0)), ("n11", .double(1e-300)),
        ("n12", .double(1.0)), ("n13", .int(1)), ("n14", .double(1.5)), ("n15", .int(2)),
        ("n16", .int(9_007_199_254_740_992)), ("n17", .double(9_007_199_254_740_992.0)), ("n18", .int(9_007_199_254_740_993)),
        ("n19", .double(9_007_199_254_740_994.0)), ("n20", .int(9_007_199_254_740_995)), ("n21", .int(Int64.max - 1)),
        ("n22", .int(Int64.max)), ("n23", .double(9_223_372_036_854_775_808.0)), ("n24", .double(1e300)),
        ("s1", ""), ("s2", "0"), ("s3", "B"), ("s4", "a"), ("s5", "a\u{1F600}"), ("s6", "a\u{FF61}"),
        ("x1", ["z": 1]), ("x2", ["a": "b"]), ("x3", [1, 2]),
    ]

    @Test("value index: false < true < numbers (Int64/Double exact) < strings < objects, ties by key")
    func mixedValueIndex() throws {
        var object: [String: JSONValue] = [:]
        for (key, value) in Self.mixedValues { object[key] = value }
        let node = try makeNode(.object(object))
        let sorted = sortedChildren(node, by: .value)
        #expect(sorted.map(\.key.string) == Self.mixedValues.map(\.0))
        expectOrder(sorted, by: .value)
    }

    @Test("child index: missing/leaf < false < true < numbers < strings < objects, ties by key")
    func mixedChildIndex() throws {
        var object: [String: JSONValue] = ["a-missing": ["other": 1], "a-leaf": "leaf", "a-null": ["v": .null, "w": 1]]
        for (key, value) in Self.mixedValues { object[key] = ["v": ["w": value]] }
        let node = try makeNode(.object(object))
        let expected = ["a-leaf", "a-missing", "a-null"] + Self.mixedValues.map(\.0)
        let sorted = sortedChildren(node, by: child("v/w"))
        #expect(sorted.map(\.key.string) == expected)
        expectOrder(sorted, by: child("v/w"))
    }

    @Test("priority index: none < numbers (Int64/Double exact) < strings, ties by key")
    func mixedPriorityIndex() throws {
        var object: [String: JSONValue] = ["a-none": 1, "b-none": ["x": 1]]
        var expected = ["a-none", "b-none"]
        for (key, value) in Self.mixedValues {
            switch value {
            case .int, .double, .string:
                object[key] = ["x": 1, ".priority": value]
                expected.append(key)
            default: continue
            }
        }
        let node = try makeNode(.object(object))
        let sorted = sortedChildren(node, by: .priority)
        #expect(sorted.map(\.key.string) == expected)
        expectOrder(sorted, by: .priority)
    }

    @Test("key index: values and priorities are ignored")
    func mixedKeyIndex() throws {
        var object: [String: JSONValue] = [:]
        for (i, (key, value)) in Self.mixedValues.enumerated() {
            object[key] = i.isMultiple(of: 2) ? value : [".value": "v", ".priority": .int(Int64(-i))]
        }
        let node = try makeNode(.object(object))
        let sorted = sortedChildren(node, by: .key)
        #expect(sorted.map(\.key) == Self.mixedValues.map { ChildKey($0.0) }.sorted())
        #expect(sorted.map(\.key) == node.childMap.keys)
        expectOrder(sorted, by: .key)
        for (a, b) in zip(sorted, sorted.dropFirst()) {
            #expect(QueryIndex.key.compareSortValues(QueryIndex.key.sortValue(of: a.node), QueryIndex.key.sortValue(of: b.node)) == 0)
        }
    }

    @Test("value comparison of numbers is exact across Int64 and Double")
    func numberComparison() {
        #expect(LeafValue.compare(.int(9_007_199_254_740_993), .double(9_007_199_254_740_992.0)) == 1)
        #expect(LeafValue.compare(.double(9_007_199_254_740_992.0), .int(9_007_199_254_740_993)) == -1)
        #expect(LeafValue.compare(.int(Int64.max), .double(9_223_372_036_854_775_808.0)) == -1)
        #expect(LeafValue.compare(.int(Int64.min), .double(-9_223_372_036_854_775_808.0)) == 0)
        #expect(LeafValue.compare(.int(1), .double(1.0)) == 0)
        #expect(LeafValue.compare(.int(-1), .double(-0.5)) == -1)
        #expect(LeafValue.compare(.int(0), .double(-0.0)) == 0)
        #expect(LeafValue.compare(.bool(true), .int(0)) == -1)
        #expect(LeafValue.compare(.int(Int64.max), .string("")) == -1)
        #expect(LeafValue.int(1) == LeafValue.double(1.0))
        #expect(LeafValue.bool(true) != LeafValue.int(1))
        #expect(LeafValue.int(9_007_199_254_740_993) != LeafValue.double(9_007_199_254_740_992.0))
    }

    @Test("moves per index")
    func moves() throws {
        let a = try makeNode(["v": 1, "w": "x"])
        let aDouble = try makeNode(["v": 1.0, "w": "x"])
        let aOther = try makeNode(["v": 1, "w": "y"])
        let aPrioritized = try makeNode(["v": 1, "w": "x", ".priority": 3])
        #expect(!QueryIndex.key.isMove(from: a, to: aOther))
        #expect(!QueryIndex.priority.isMove(from: a, to: aOther))
        #expect(QueryIndex.priority.isMove(from: a, to: aPrioritized))
        #expect(!QueryIndex.value.isMove(from: a, to: aDouble))
        #expect(QueryIndex.value.isMove(from: a, to: aOther))
        #expect(QueryIndex.value.isMove(from: a, to: aPrioritized))
        #expect(!child("v").isMove(from: a, to: aDouble))
        #expect(!child("v").isMove(from: a, to: aOther))
        #expect(child("w").isMove(from: a, to: aOther))
        let objectA = try makeNode(["v": ["p": 1]])
        let objectB = try makeNode(["v": ["q": 2]])
        #expect(!child("v").isMove(from: objectA, to: objectB))
        #expect(child("v").isMove(from: objectA, to: try makeNode(["v": 2])))
    }
}
