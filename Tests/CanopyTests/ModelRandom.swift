import Canopy
import CanopyTestSupport

/// The random choices the model suites (``QueryModelTests``, ``AggregateModelTests``) draw alike:
/// each suite picks its own keys and scalars; priorities and queries are drawn here.
protocol ModelRandom {
    var rng: SeededGenerator { get set }
    mutating func key() -> String
    mutating func scalar() -> JSONValue
    mutating func child() -> JSONValue
}

extension ModelRandom {
    mutating func int(_ n: Int) -> Int { Int(self.rng.next() % UInt64(n)) }
    mutating func chance(_ percent: Int) -> Bool { self.int(100) < percent }

    mutating func priority() -> JSONValue {
        switch self.int(4) {
        case 0: return .null
        case 1: return .int(Int64(self.int(3)))
        case 2: return .string(["x", "y"][self.int(2)])
        default: return .double(0.5)
        }
    }

    /// A query on one of five indexes: an `equalTo` one time in ten, else a start and an end each
    /// `boundChance` percent of the time (with a key, and exclusive, each `keyChance` percent),
    /// and a limit of 1 to `maxLimit` `limitChance` percent of the time.
    mutating func query(keyChance: Int, boundChance: Int, limitChance: Int, maxLimit: Int) -> OracleQuery {
        var q = OracleQuery()
        switch self.int(5) {
        case 0: q.index = .priority
        case 1: q.index = .key
        case 2: q.index = .value
        case 3: q.index = .child(["v"])
        default: q.index = .child(["w", "x"])
        }
        func endpoint(_ r: inout Self, _ index: OracleQuery.Index) -> OracleQuery.Endpoint {
            switch index {
            case .key: return .init(value: .string(r.key()), key: nil, exclusive: r.chance(keyChance))
            case .priority: return .init(value: r.priority(), key: r.chance(keyChance) ? r.key() : nil, exclusive: r.chance(keyChance))
            default: return .init(value: r.scalar(), key: r.chance(keyChance) ? r.key() : nil, exclusive: r.chance(keyChance))
            }
        }
        if self.chance(10) {
            // equalTo
            let e = endpoint(&self, q.index)
            q.start = .init(value: e.value, key: e.key, exclusive: false)
            q.end = .init(value: e.value, key: e.key, exclusive: false)
        } else {
            if self.chance(boundChance) { q.start = endpoint(&self, q.index) }
            if self.chance(boundChance) { q.end = endpoint(&self, q.index) }
        }
        if self.chance(limitChance) { q.limit = (self.chance(50), 1 + self.int(maxLimit)) }
        return q
    }

    /// Sets a random child of `list` to a random child value, in the database and in `model`;
    /// returns the child's key and a description of the step.
    mutating func setChild(in list: DatabaseReference, _ model: inout ModelTree) throws -> (key: String, description: String) {
        let key = self.key()
        let value = self.child()
        try list.child(key).queueSetValue(value)
        model.set(ModelNode.from(value), at: ["list", key])
        return (key, "set \(key) = \(value.jsonString())")
    }

    /// Removes a random child of `list`, in the database and in `model`; returns the child's key
    /// and a description of the step.
    mutating func removeChild(in list: DatabaseReference, _ model: inout ModelTree) throws -> (key: String, description: String) {
        let key = self.key()
        try list.child(key).queueRemoveValue()
        model.set(nil, at: ["list", key])
        return (key, "remove \(key)")
    }

    /// Sets a random priority on a random child of `list`, in the database and in `model` (where
    /// the child exists); returns the child's key and a description of the step.
    mutating func setPriority(in list: DatabaseReference, _ model: inout ModelTree) -> (key: String, description: String) {
        let key = self.key()
        let priority = self.priority()
        list.child(key).setPriority(priority.anyValue) { _, _ in }
        if let node = model.node(at: ["list", key]) {
            model.set(node.withPriority(priority == JSONValue.null ? Optional<JSONValue>.none : priority), at: ["list", key])
        }
        return (key, "setPriority \(key) \(priority.jsonString())")
    }

    /// A multi-path update of `list` with 1 to `maxEntries` random entries (children or their
    /// `v`, removed `removals` percent of the time), in the database and in `model`; returns a
    /// description of the step.
    mutating func update(_ list: DatabaseReference, _ model: inout ModelTree, maxEntries: Int, removals: Int) throws -> String {
        var entries: [String: JSONValue] = [:]
        for _ in 0..<(1 + self.int(maxEntries)) {
            let key = self.key()
            entries[self.chance(50) ? key : key + "/v"] = self.chance(removals) ? .null : (self.chance(50) ? self.child() : self.scalar())
        }
        // Drop overlapping entries (an update may not contain a path and its ancestor).
        for k in entries.keys where k.hasSuffix("/v") && entries[String(k.dropLast(2))] != nil { entries[k] = nil }
        try list.queueUpdateChildValues(entries.mapValues { $0 as Any })
        for (k, v) in entries where ModelNode.from(v) != nil {
            model.set(ModelNode.from(v), at: ["list"] + k.split(separator: "/").map(String.init))
        }
        for (k, v) in entries where ModelNode.from(v) == nil {
            model.set(nil, at: ["list"] + k.split(separator: "/").map(String.init))
        }
        return "update \(JSONValue.object(entries).jsonString())"
    }
}
