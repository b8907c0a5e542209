import Canopy
import CanopyTestSupport
import Foundation
import Testing

/// Live aggregates against a brute-force recount: random children (integers, doubles, strings,
/// booleans, objects, missing fields), random writes (sets, field changes, removals, priorities,
/// multi-path updates, whole-list sets) that move children across range bounds, every order, random
/// ranges and limits. After every write, each live aggregate's observed value and a `getData()`
/// must equal a recount over the oracle's window (``OracleQuery/window(_:)``, written from the
/// range table), in the same form (an integer or a double), and an observer must be called exactly
/// when its value changed (not when only its form did).
// Serialized: each case is a long synchronous loop on a test thread; one at a time leaves the
// other threads (2 cores) to the rest of the suite.
@Suite("Aggregates against a brute-force recount", .serialized)
struct AggregateModelTests {
    struct Random: ModelRandom {
        var rng: SeededGenerator
        /// Dyadic doubles only (exact sums): the exact suite can then demand exact equality.
        var exactDoubles = true
        mutating func key() -> String { self.chance(10) ? ["1", "2", "10", "03"][self.int(4)] : "k\(self.int(40))" }

        /// A number or something that is not one.
        mutating func scalar() -> JSONValue {
            switch self.int(10) {
            case 0: return .string(["x", "y", "7"][self.int(3)])
            case 1: return .bool(self.chance(50))
            case 2, 3, 4: return self.double()
            default: return .int(Int64(self.int(101)) - 50)
            }
        }

        mutating func double() -> JSONValue {
            if self.exactDoubles { return .double(Double(self.int(400) - 200) / 8 + 0.125) }
            return .double((Double(self.int(2_000_001)) - 1_000_000) / 997 * (self.chance(20) ? 1e-6 : 1))
        }

        /// A child: an object with `v`, `w/x` and `n` (large integers whose sums overflow 64 bits),
        /// each sometimes missing, or a plain leaf.
        mutating func child() -> JSONValue {
            if self.chance(15) { return self.scalar() }
            var object: [String: JSONValue] = [:]
            if self.chance(85) { object["v"] = self.scalar() }
            if self.chance(50) { object["w"] = ["x": self.scalar()] }
            if self.chance(40) { object["n"] = .int(Int64.max / 3 - Int64(self.int(1000)) * (self.chance(50) ? 1 : -1)) }
            if self.chance(20) { object[".priority"] = self.priority() }
            return .object(object)
        }

        mutating func query() -> OracleQuery { self.query(keyChance: 30, boundChance: 60, limitChance: 25, maxLimit: 12) }

        mutating func functions() -> [AggregateFunction] {
            let fields = ["v", "w/x", "n", "$value"]
            var result: [AggregateFunction] = self.chance(70) ? [.count] : []
            for _ in 0..<(1 + self.int(4)) {
                let f = fields[self.int(fields.count)]
                switch self.int(4) {
                case 0: result.append(.sum(f))
                case 1: result.append(.average(f))
                case 2: result.append(.min(f))
                default: result.append(.max(f))
                }
            }
            return result
        }
    }

    /// A recount of one function over a window, straight from the children.
    enum Expected: Equatable, CustomStringConvertible {
        case int(Int64)
        case double(Double)
        case null

        var description: String {
            switch self {
            case .int(let i): return "\(i)"
            case .double(let d): return "\(d)"
            case .null: return "null"
            }
        }
    }

    static func number(_ node: ModelNode, field: String) -> (int: Int64?, double: Double?)? {
        var current: ModelNode? = node
        if field != "$value" { for k in field.split(separator: "/") { current = current?.children[String(k)] } }
        switch current {
        case .leaf(.int(let i), _)?: return (i, nil)
        case .leaf(.double(let d), _)?: return (nil, d)
        default: return nil
        }
    }

    /// The brute-force value of `function` over `window`: integers summed exactly in `Int128`,
    /// doubles in plain order (exact for the exact suite's dyadic values).
    static func recount(_ function: AggregateFunction, _ window: [(key: String, value: ModelNode)]) -> Expected {
        let field: String
        switch function {
        case .count: return .int(Int64(window.count))
        case .sum(let f), .average(let f), .min(let f), .max(let f): field = f
        }
        let numbers = window.compactMap { Self.number($0.value, field: field) }
        var intSum: Int128 = 0
        var doubleSum = 0.0
        var hasDouble = false
        var values: [Double] = []
        var extreme: (int: Int64?, double: Double?)?
        for n in numbers {
            if let i = n.int { intSum += Int128(i) }
            if let d = n.double {
                doubleSum += d
                hasDouble = true
            }
            let value = n.int.map(Double.init) ?? n.double!
            values.append(value)
            if let e = extreme {
                let current = e.int.map(Double.init) ?? e.double!
                let better: Bool
                if case .min = function {
                    better = value < current || (value == current && n.int != nil && e.int != nil && n.int! < e.int!)
                } else {
                    better = value > current || (value == current && n.int != nil && e.int != nil && n.int! > e.int!)
                }
                if better { extreme = n }
            } else {
                extreme = n
            }
        }
        switch function {
        case .sum:
            if !hasDouble, let exact = Int64(exactly: intSum) { return .int(exact) }
            return .double(Double(intSum) + doubleSum)
        case .average:
            if numbers.isEmpty { return .null }
            let n = Int128(numbers.count)
            // Integers only: divide exactly first, so the quotient is rounded once.
            if !hasDouble { return .double(Double(intSum / n) + Double(intSum % n) / Double(n)) }
            return .double((Double(intSum) + doubleSum) / Double(numbers.count))
        case .min, .max:
            guard let extreme else { return .null }
            if let i = extreme.int { return .int(i) }
            return Self.canonical(extreme.double!)
        case .count: return .null
        }
    }

    /// A minimum or maximum in its documented form: an integer when integer-valued and within
    /// `Int64` (so `3.0` is `3`, whichever child won a tie), else a double.
    static func canonical(_ d: Double) -> Expected {
        if d.rounded(.towardZero) == d && d >= -0x1p63 && d < 0x1p63 { return .int(Int64(d)) }
        return .double(d)
    }

    /// Whether two recounts are the same value, whatever their forms (`6` and `6.0` are): exactly,
    /// or within 1e-9 relative when not `exact`. Observers are called on a change of value only.
    static func sameValue(_ a: Expected, _ b: Expected, exact: Bool) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.int(let x), .int(let y)): return x == y
        case (.int(let x), .double(let y)), (.double(let y), .int(let x)):
            if exact { return Double(exactly: x) == y }
            return abs(Double(x) - y) <= 1e-9 * max(1, abs(y))
        case (.double(let x), .double(let y)): return exact ? x == y : abs(x - y) <= 1e-9 * max(1, abs(y))
        default: return false
        }
    }

    /// Whether the engine's `actual` is the recount `expected`, in the same form (an integer where
    /// the recount has one, a double where it has a double): integers exactly, doubles exactly when
    /// `exact` (else within 1e-9 relative, see the Live Aggregates article).
    static func matches(_ actual: JSONValue?, _ expected: Expected, exact: Bool) -> Bool {
        switch (actual, expected) {
        case (.int(let a)?, .int(let e)): return a == e
        case (.null?, .null): return true
        case (.double(let a)?, .double(let e)):
            if exact { return a == e }
            return abs(a - e) <= 1e-9 * max(1, abs(e))
        default: return false
        }
    }

    static func recount(_ functions: [AggregateFunction], _ window: [(key: String, value: ModelNode)]) -> [Expected] {
        functions.map { Self.recount($0, window) }
    }

    static func mismatch(_ snapshot: AggregateSnapshot, _ functions: [AggregateFunction], _ expected: [Expected], count: Int, exact: Bool)
        -> String?
    {
        if snapshot.count != count { return "count \(snapshot.count), expected \(count)" }
        for (f, e) in zip(functions, expected) where !Self.matches(snapshot[f], e, exact: exact) {
            return "\(f): \(snapshot[f].map { $0.jsonString() } ?? "absent"), expected \(e)"
        }
        return nil
    }

    @Test("live and one-shot aggregates equal a recount after every write (exact values)", arguments: [21, 22, 23] as [UInt64])
    func exactValues(seed: UInt64) async throws {
        try await onComputeThreads { try self.run(seed: seed, exact: true, steps: 500) }
    }

    @Test("with arbitrary doubles, sums and averages stay within rounding of a recount", arguments: [31, 32] as [UInt64])
    func roundedValues(seed: UInt64) async throws {
        try await onComputeThreads { try self.run(seed: seed, exact: false, steps: 300) }
    }

    func run(seed: UInt64, exact: Bool, steps: Int) throws {
        var random = Random(rng: SeededGenerator(seed: seed), exactDoubles: exact)
        let db = try manualDatabase()
        defer { db.close() }
        var model = ModelTree()
        let list = db.reference(withPath: "list")
        var initial: [String: JSONValue] = [:]
        for _ in 0..<30 { initial[random.key()] = random.child() }
        try list.queueSetValue(JSONValue.object(initial))
        model.set(ModelNode.from(.object(initial)), at: ["list"])
        db.drain()

        final class Observed: @unchecked Sendable {  // loop thread only (manual drain on this thread)
            var snapshots: [AggregateSnapshot] = []
        }
        struct Live {
            var query: OracleQuery
            var functions: [AggregateFunction]
            var aggregate: AggregateQuery
            var handle: DatabaseHandle
            var observed: Observed
            var last: [Expected]
            var lastCount: Int
        }
        var lives: [Live] = []
        func addLive() {
            let query = random.query()
            let functions = random.functions()
            let aggregate = query.apply(to: list).aggregate(functions)
            let observed = Observed()
            let handle = aggregate.observe(
                with: { observed.snapshots.append($0) },
                withCancel: { error in
                    if (error as? DatabaseError)?.code != .closed { Issue.record("\(query) \(functions) cancelled: \(error)") }
                })
            db.drain()
            let window = query.window(model.node(at: ["list"]))
            let expected = Self.recount(functions, window)
            #expect(observed.snapshots.count == 1, "initial value of \(query) \(functions)")
            if let first = observed.snapshots.first, let m = Self.mismatch(first, functions, expected, count: window.count, exact: exact) {
                Issue.record("initial \(query) \(functions): \(m)")
            }
            observed.snapshots.removeAll()
            lives.append(
                Live(
                    query: query, functions: functions, aggregate: aggregate, handle: handle, observed: observed, last: expected,
                    lastCount: window.count))
        }
        for _ in 0..<8 { addLive() }

        for step in 0..<steps {
            if step % 100 == 99 {
                let live = lives.removeFirst()
                live.aggregate.removeObserver(withHandle: live.handle)
                db.drain()
                addLive()
            }
            var description = ""
            switch random.int(20) {
            case 0..<7:
                description = try random.setChild(in: list, &model).description
            case 7..<11:
                let key = random.key()
                let field = random.chance(70) ? "v" : "w/x"
                let value = random.chance(10) ? JSONValue.null : random.scalar()
                try list.child(key).child(field).queueSetValue(value)
                model.set(ModelNode.from(value), at: ["list", key] + field.split(separator: "/").map(String.init))
                description = "set \(key)/\(field) = \(value.jsonString())"
            case 11..<14:
                description = try random.removeChild(in: list, &model).description
            case 14:
                description = random.setPriority(in: list, &model).description
            case 15..<19:
                description = try random.update(list, &model, maxEntries: 5, removals: 20)
            default:
                var value: [String: JSONValue] = [:]
                for _ in 0..<(random.int(40)) { value[random.key()] = random.child() }
                try db.reference().queueSetValue(JSONValue.object(["list": .object(value)]))
                model.set(ModelNode.from(.object(value)), at: ["list"])
                description = "set / = {list: \(value.count) children}"
            }
            db.drain()
            for i in lives.indices {
                let live = lives[i]
                let window = live.query.window(model.node(at: ["list"]))
                let expected = Self.recount(live.functions, window)
                // A change of form alone (a sum of 6.0 that becomes 6) is no change. Without exact
                // doubles, a change within rounding may or may not be reported.
                let changed =
                    window.count != live.lastCount
                    || zip(live.last, expected).contains { old, new in !Self.sameValue(old, new, exact: exact) }
                let got = live.observed.snapshots
                live.observed.snapshots.removeAll()
                if exact {
                    #expect(
                        got.count == (changed ? 1 : 0),
                        "step \(step) \(description): \(live.query) \(live.functions) called \(got.count) times")
                } else {
                    #expect(got.count <= 1, "step \(step): called \(got.count) times")
                    if changed && got.isEmpty { Issue.record("step \(step) \(description): \(live.query) \(live.functions) not called") }
                }
                if let snapshot = got.last, let m = Self.mismatch(snapshot, live.functions, expected, count: window.count, exact: exact) {
                    Issue.record("step \(step) \(description): live \(live.query) \(live.functions): \(m)")
                    return
                }
                lives[i].last = expected
                lives[i].lastCount = window.count
            }
            // One-shot reads: one sharing a live aggregate's indexes, one building its own.
            if step % 7 == 0 {
                let live = lives[random.int(lives.count)]
                let fresh = (random.query(), random.functions())
                for (query, functions) in [(live.query, live.functions), fresh] {
                    let window = query.window(model.node(at: ["list"]))
                    var read: AggregateSnapshot?
                    query.apply(to: list).aggregate(functions).getData { _, snapshot in read = snapshot }
                    db.drain()
                    let expected = Self.recount(functions, window)
                    if let m = read.flatMap({ Self.mismatch($0, functions, expected, count: window.count, exact: exact) })
                        ?? (read == nil ? "no value" : nil)
                    {
                        Issue.record("step \(step): getData \(query) \(functions): \(m)")
                        return
                    }
                }
            }
        }
    }
}
