import CanopyCore
import Testing

private func increment(_ delta: LeafValue) -> ServerValuePlaceholder { .increment(delta) }

/// Resolves `value` (with its placeholders) against `current` at time `now`.
private func resolve(_ value: JSONValue, against current: JSONValue, now: Int64 = 1_234) throws -> Node {
    var converter = try ValueConverter(function: "set", location: [])
    return try converter.convert(value).resolved(against: try makeNode(current), now: now)
}

/// Distinguishes `.int` from `.double` (equality alone compares by value).
private func isInt(_ v: LeafValue?) -> Bool { if case .int = v { return true } else { return false } }
private func isDouble(_ v: LeafValue?) -> Bool { if case .double = v { return true } else { return false } }

@Suite("Server values")
struct ServerValueTests {
    @Test("parsing .sv contents")
    func parsing() {
        #expect(ServerValuePlaceholder("timestamp") == .timestamp)
        #expect(ServerValuePlaceholder(["increment": 1]) == .increment(.int(1)))
        #expect(ServerValuePlaceholder(["increment": 1.5]) == .increment(.double(1.5)))
        #expect(ServerValuePlaceholder(["increment": -7]) == .increment(.int(-7)))
        for invalid in [
            "TIMESTAMP", "increment", ["increment": "1"], ["increment": true], ["increment": .double(.nan)],
            ["increment": .double(.infinity)], ["increment": 1, "x": 1], [:], 1, .null,
        ] as [JSONValue] {
            #expect(ServerValuePlaceholder(invalid) == nil, "\(invalid)")
        }
    }

    @Test(
        "int + int stays an Int64, exactly, beyond 2^53",
        arguments: [(1, 41, 42), (1, 9_007_199_254_740_992, 9_007_199_254_740_993), (-5, 2, -3), (1, Int64.max - 1, Int64.max)]
            as [(Int64, Int64, Int64)])
    func intPlusInt(delta: Int64, current: Int64, sum: Int64) {
        let r = increment(.int(delta)).resolve(current: .int(current), now: 0)
        #expect(r == .int(sum) && isInt(r))
    }

    @Test("Int64 overflow falls back to Double")
    func overflow() {
        let up = increment(.int(1)).resolve(current: .int(Int64.max), now: 0)
        #expect(isDouble(up))
        #expect(up == .double(9_223_372_036_854_775_808.0))
        let down = increment(.int(-1)).resolve(current: .int(Int64.min), now: 0)
        #expect(isDouble(down))
        #expect(down.doubleValue == -9_223_372_036_854_775_808.0)
        let huge = increment(.int(Int64.max)).resolve(current: .int(Int64.max), now: 0)
        #expect(huge == .double(18_446_744_073_709_551_614.0))
    }

    /// An integral result stays a Double when an operand is one (but equals the integer): 1.0 + 1.
    @Test(
        "int + double, double + int and double + double give a Double",
        arguments: [
            (.double(0.5), .int(1), 1.5), (.int(2), .double(0.25), 2.25), (.double(1.5), .double(1.0), 2.5), (.double(1.0), .int(1), 2),
        ]
            as [(LeafValue, LeafValue, Double)])
    func mixed(delta: LeafValue, current: LeafValue, sum: Double) {
        let r = increment(delta).resolve(current: current, now: 0)
        #expect(r == .double(sum) && isDouble(r))
        if sum.rounded() == sum { #expect(r == .int(Int64(sum))) }
    }

    @Test(
        "a missing, string or boolean current value is replaced by the delta",
        arguments: [nil, .string("hello"), .bool(true), .bool(false)] as [LeafValue?])
    func nonNumericCurrent(current: LeafValue?) {
        let r = increment(.int(3)).resolve(current: current, now: 0)
        #expect(r == .int(3) && isInt(r))
        let d = increment(.double(2.5)).resolve(current: current, now: 0)
        #expect(d == .double(2.5))
    }

    @Test("timestamp resolves to the given time as an integer")
    func timestamp() {
        let r = ServerValuePlaceholder.timestamp.resolve(current: .int(5), now: 1_700_000_000_123)
        #expect(r == .int(1_700_000_000_123) && isInt(r))
        #expect(ServerValuePlaceholder.timestamp.resolve(current: nil, now: 0) == .int(0))
    }

    @Test("resolving a written value: every placeholder against its own path, one time for all")
    func resolvedWrite() throws {
        let node = try resolve(
            [
                "a": [".sv": "timestamp"], "b": [".sv": "timestamp"], "count": [".sv": ["increment": 2]],
                "deep": ["n": [".sv": ["increment": 1]]], "s": [".sv": ["increment": 1]], "o": [".sv": ["increment": 1]], "lit": 5,
            ],
            against: ["count": 40, "deep": ["n": 1.5], "s": "hello", "o": ["hello": "world"], "lit": 1],
            now: 99
        )
        #expect(node.plainJSON == ["a": 99, "b": 99, "count": 42, "deep": ["n": 2.5], "s": 1, "o": 1, "lit": 5])
        #expect(node.child("a") == node.child("b"))
    }

    @Test(
        "a placeholder at the written location resolves against its current value",
        arguments: [
            (.null, 1), (5, 6), ("hello", 1), (["hello": "world"], 1), (true, 1), (1.5, 2.5),
        ] as [(JSONValue, JSONValue)])
    func placeholderResolvesAgainstCurrentValue(current: JSONValue, expected: JSONValue) throws {
        let node = try resolve([".sv": ["increment": 1]], against: current)
        #expect(node.plainJSON == expected)
    }

    @Test("priority placeholders resolve against the current priority")
    func priorities() throws {
        let fresh = try resolve([".value": 0, ".priority": [".sv": ["increment": 1]]], against: .null)
        #expect(fresh.exportJSON == [".value": 0, ".priority": 1])
        let again = try resolve([".value": 0, ".priority": [".sv": ["increment": 1.5]]], against: fresh.exportJSON)
        #expect(again.exportJSON == [".value": 0, ".priority": 2.5])
        let stringPriority = try resolve(["x": 1, ".priority": [".sv": ["increment": 2]]], against: ["x": 1, ".priority": "p"])
        #expect(stringPriority.exportJSON == ["x": 1, ".priority": 2])
        let timestampPriority = try resolve(["x": 1, ".priority": [".sv": "timestamp"]], against: .null, now: 77)
        #expect(timestampPriority.exportJSON == ["x": 1, ".priority": 77])
        // A value placeholder replaces the node, so the current priority there does not survive.
        let replaced = try resolve(["c": [".sv": ["increment": 1]]], against: ["c": [".value": 10, ".priority": 3]])
        #expect(replaced.exportJSON == ["c": 11])
    }

    @Test("a priority placeholder on an empty value resolves to nothing")
    func priorityOnEmpty() throws {
        let node = try resolve(["a": .null, ".priority": [".sv": "timestamp"]], against: ["a": 1])
        #expect(node.isEmpty)
    }

    @Test("sequence of writes through the engine: increments on values and in sparse updates")
    func engineSequence() throws {
        let engine = SyncEngine()
        func set(_ path: String, _ value: JSONValue) throws {
            let p = try DatabasePath(validating: path, function: "set")
            var converter = try ValueConverter(function: "set", location: p.keys.map(\.string))
            _ = try engine.apply(.set(p, try converter.convert(value)), now: 1)
        }
        let inc: JSONValue = [".sv": ["increment": 1]]
        try set("v", inc)
        #expect(engine.node(at: try DatabasePath(validating: "v", function: "t")).plainJSON == 1)
        try set("v", 5)
        try set("v", inc)
        #expect(engine.root.plainJSON == ["v": 6])
        try set("v", "hello")
        try set("v", inc)
        #expect(engine.root.plainJSON == ["v": 1])
        try set("v", ["hello": "world"])
        try set("v", inc)
        #expect(engine.root.plainJSON == ["v": 1])
        for _ in 0..<99 { try set("v", inc) }
        #expect(engine.root.plainJSON == ["v": 100])
    }
}
