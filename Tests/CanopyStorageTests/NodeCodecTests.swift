import CanopyCore
import CanopyStorage
import CanopyTestSupport
import Testing

@Suite("Node codec")
struct NodeCodecTests {
    @Test("every leaf kind round-trips exactly")
    func leaves() throws {
        var values: [LeafValue] = [.bool(false), .bool(true)]
        values += RandomTrees.specialInts.map { .int($0) }
        values += RandomTrees.specialDoubles.map { .double($0) }
        values += RandomTrees.specialStrings.map { .string($0) }
        for value in values {
            for node in [
                Node.leaf(value), Node.leaf(value).withPriority(.int(-5)), Node.leaf(value).withPriority(.string("p😀")),
                Node.leaf(value).withPriority(.double(-0.0)),
            ] {
                let decoded = try decodeNode(encoded(node))
                #expect(decoded == node)
                #expect(identical(decoded, node), "\(value)")
            }
        }
        #expect(try decodeNode(encoded(.empty)).isEmpty)
        #expect(encoded(.leaf(.int(5))) == [0xC5])
        #expect(encoded(.leaf(.string("ab"))) == [0x42, 0x61, 0x62])
        // The example of StorageFormat.md.
        let example = Node.from(
            children: SortedMap(sortedKeys: [ChildKey("a"), ChildKey("ab")], values: [.leaf(.int(1)), .leaf(.bool(true))]))
        #expect(encoded(example) == [0x81, 0x01, 0x01, 0x61, 0xC1, 0x05, 0x01, 0x62, 0x02])
    }

    @Test("integer-like keys keep their exact strings and order")
    func integerKeys() throws {
        let keys = ["5", "-3", "007", "07", "7", "-0", "0", "00", "2147483648", "-2147483649", "a", "1e3", "-20", "-2", "-", "-2x"]
        var map = SortedMap<ChildKey, Node>()
        for (i, k) in keys.enumerated() { _ = map.updateValue(.leaf(.int(Int64(i))), forKey: ChildKey(k)) }
        let node = Node.from(children: map)
        let decoded = try decodeNode(encoded(node))
        #expect(identical(decoded, node))
        #expect(decoded.childMap.keys.map(\.string) == node.childMap.keys.map(\.string))
        #expect(decoded.child("007").leafValue == .int(2))
        #expect(decoded.childMap.keys.map(\.integerValue) == node.childMap.keys.map(\.integerValue))
    }

    @Test("random trees round-trip", arguments: 0..<40)
    func randomTrees(seed: UInt64) throws {
        var random = RandomTrees(seed: seed)
        let node = random.node(depth: 5)
        let decoded = try decodeNode(encoded(node))
        #expect(decoded == node)
        #expect(identical(decoded, node))
        #expect(decoded.priority == node.priority)
    }

    @Test("repeated keys are shared through the key table")
    func keyTable() throws {
        var items = SortedMap<ChildKey, Node>()
        for i in 0..<500 {
            let item = Node.from(
                children: SortedMap(
                    sortedKeys: [ChildKey("name"), ChildKey("value")], values: [.leaf(.string("n\(i)")), .leaf(.int(Int64(i)))]))
            _ = items.updateValue(item, forKey: ChildKey("item-\(1000 + i)"))
        }
        let node = Node.from(children: items)
        let bytes = encoded(node)
        // Literal keys twice ("name", "value"), then 1-byte references; item keys share prefixes.
        #expect(bytes.count < 500 * 14)
        let decoded = try decodeNode(bytes)
        #expect(identical(decoded, node))
        let first = decoded.child("item-1000").childMap.keys
        let last = decoded.child("item-1499").childMap.keys
        #expect(first.map(\.string) == ["name", "value"] && last.map(\.string) == ["name", "value"])
    }

    @Test("many distinct field names are shared too")
    func manyFieldNames() throws {
        let fields = (0..<40).map { ChildKey("field\($0)") }.sorted()
        var objects = SortedMap<ChildKey, Node>()
        for i in 0..<50 {
            let values = ContiguousArray(fields.indices.map { Node.leaf(.int(Int64($0 + i))) })
            _ = objects.updateValue(
                Node.from(children: SortedMap(sortedKeys: ContiguousArray(fields), values: values)), forKey: ChildKey("o\(i)"))
        }
        let node = Node.from(children: objects)
        let bytes = encoded(node)
        // After two literal sightings each name is a 1-byte (index < 32) or 2-byte reference.
        #expect(bytes.count < 2 * 40 * 8 + 48 * 40 * 4)
        #expect(identical(try decodeNode(bytes), node))
    }

    @Test("deep nesting round-trips; nesting beyond the limit is an error, not a crash")
    func depth() throws {
        var node = Node.leaf(.bool(true))
        for i in 0..<40 {
            node = Node.from(
                children: SortedMap(sortedKeys: [ChildKey("k\(i % 3)")], values: [node]), priority: i % 5 == 0 ? .int(Int64(i)) : nil)
        }
        #expect(identical(try decodeNode(encoded(node)), node))

        var w = ByteWriter()
        for _ in 0..<1200 { w.append(contentsOf: [0x80, 0x01, 0x01, 0x61]) }  // {"a": {"a": …
        w.append(0xC1)
        #expect {
            _ = try decodeNode(w.bytes)
        } throws: { error in
            (error as? CodecError)?.reason.contains("nesting") == true
        }
    }

    @Test("every truncation of an encoded tree fails cleanly with an offset")
    func truncations() throws {
        var random = RandomTrees(seed: 99)
        let node = random.node(depth: 4)
        let bytes = encoded(node)
        #expect(bytes.count > 50)
        expectEveryTruncationFails(bytes, decodeNode)
    }

    @Test(
        "hand-made payloads breaking node invariants are rejected",
        arguments: [
            ([0x81, 0x01, 0x01, 0x62, 0xC1, 0x01, 0x01, 0x61, 0xC2], 5, "order"),  // "b" then "a"
            ([0x81, 0x01, 0x01, 0x61, 0xC1, 0x01, 0x01, 0x61, 0xC2], 5, "order"),  // "a" twice
            ([0x81, 0x01, 0x01, 0x61, 0xC1, 0x01, 0x02, 0x30, 0x30, 0xC2], 5, "order"),  // "a" then "00"
            ([0x80, 0x01, 0x01, 0x61, 0x00], 4, "empty child"),
            ([0x06, 0x00], 0, "no children"),
            ([0x80, 0x01, 0x00, 0xC1], 1, "empty key"),
            ([0x81, 0x01, 0x01, 0x61, 0xC1, 0x05, 0x00, 0xC1], 5, "order"),  // "a" then "a" (prefix 1, no suffix)
            ([0x80, 0x05, 0x01, 0x61, 0xC1], 1, "no previous key"),
            ([0x80, 0x00, 0xC1], 1, "index"),
            ([0x80, 0x03, 0xC1], 1, "key reference"),
            ([0x80, 0x01, 0x02, 0xC3, 0x28, 0xC1], 1, "UTF-8"),
            ([0x42, 0xFF, 0xFE], 1, "UTF-8"),
            ([0x07, 0xC1, 0x80, 0x01, 0x01, 0x61, 0xC1], 2, "leaf"),
            ([0x09], 0, "leaf"),
            ([0x06, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x01, 0x01, 0x61, 0xC1], 0, "cannot fit"),
        ] as [([UInt8], Int, String)])
    func invariants(bytes: [UInt8], offset: Int, reason: String) {
        do {
            let node = try decodeNode(bytes)
            Issue.record("decoded \(node)")
        } catch {
            #expect(error.offset == offset, "\(error)")
            #expect(error.reason.contains(reason), "\(error)")
        }
    }

    @Test("random garbage never crashes the decoder")
    func garbage() {
        var random = RandomTrees(seed: 5)
        var failures = 0
        for _ in 0..<3000 {
            let bytes = (0..<(1 + random.int(40))).map { _ in UInt8(truncatingIfNeeded: random.rng.next()) }
            do { _ = try decodeNode(bytes) } catch { failures += 1 }
        }
        #expect(failures > 2000)
    }
}
