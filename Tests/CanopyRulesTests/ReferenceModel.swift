/// A deliberately naive model of the rules semantics (the DocC articles *Security Rules and User Tokens* and *The Rules Language*), written apart from the engine:
/// data is a flat map from leaf paths to numbers, rules a flat list of patterns, and every
/// question is answered by brute force over all prefixes and all locations.
struct ReferenceModel {
    /// What a location holds in the flat data.
    enum Value: Equatable, Sendable {
        case absent
        case number(Int)
        case object
    }

    /// A flat database: every leaf's full path and value.
    typealias Data = [[String]: Int]

    static func value(_ data: Data, at path: [String]) -> Value {
        if let n = data[path] { return .number(n) }
        return data.keys.contains { $0.count > path.count && Array($0.prefix(path.count)) == path } ? .object : .absent
    }

    /// `data` with the value `leaves` (relative leaf paths) written at `path`: everything under
    /// `path` goes; a leaf above `path` goes only when something is written (deleting under a
    /// leaf leaves it alone).
    static func write(_ data: Data, at path: [String], leaves: Data) -> Data {
        var result = data.filter { key, _ in
            let under = key.count >= path.count && Array(key.prefix(path.count)) == path
            let above = key.count < path.count && Array(path.prefix(key.count)) == key
            return !under && !(above && !leaves.isEmpty)
        }
        for (relative, n) in leaves { result[path + relative] = n }
        return result
    }

    /// What a rule expression sees, in the model.
    struct Context: Sendable {
        var uid: String?
        var data: Value
        var newData: Value
        var variables: [String: String]
    }

    /// An expression of the pool: its source, and its meaning written by hand.
    struct Rule: Sendable {
        var source: String
        var meaning: @Sendable (Context) -> Bool
    }

    /// A rule node of the random document: a pattern (literal keys and `$w…` wildcards).
    struct Entry {
        var pattern: [String]
        var rules: [String: Rule]  // ".read", ".write", ".validate"
    }

    let entries: [Entry]

    private var patterns: Set<[String]> { Set(self.entries.map(\.pattern)) }

    /// The entry matching a concrete location, with its wildcard bindings: literals win over the
    /// wildcard at each level.
    func match(_ location: [String]) -> (Entry, [String: String])? {
        let all = self.patterns
        for entry in self.entries where entry.pattern.count == location.count {
            var bindings: [String: String] = [:]
            var ok = true
            for (i, segment) in entry.pattern.enumerated() {
                if segment.hasPrefix("$") {
                    if all.contains(Array(entry.pattern.prefix(i)) + [location[i]]) {
                        ok = false
                        break
                    }
                    bindings[segment] = location[i]
                } else if segment != location[i] {
                    ok = false
                    break
                }
            }
            if ok { return (entry, bindings) }
        }
        return nil
    }

    func canRead(_ path: [String], uid: String?, data: Data) -> Bool {
        (0...path.count).contains { i in
            let location = Array(path.prefix(i))
            guard let (entry, vars) = self.match(location), let rule = entry.rules[".read"] else { return false }
            return rule.meaning(Context(uid: uid, data: Self.value(data, at: location), newData: .absent, variables: vars))
        }
    }

    func canWrite(_ writes: [([String], Data)], uid: String?, data: Data) -> Bool {
        var newData = data
        for (path, leaves) in writes { newData = Self.write(newData, at: path, leaves: leaves) }
        func holds(_ kind: String, at location: [String]) -> Bool? {
            guard let (entry, vars) = self.match(location), let rule = entry.rules[kind] else { return nil }
            return rule.meaning(
                Context(uid: uid, data: Self.value(data, at: location), newData: Self.value(newData, at: location), variables: vars))
        }
        for (path, _) in writes {
            let permitted = (0...path.count).contains { holds(".write", at: Array(path.prefix($0))) == true }
            if !permitted { return false }
            var locations = (0...path.count).map { Array(path.prefix($0)) }
            for key in newData.keys where key.count > path.count && Array(key.prefix(path.count)) == path {
                for n in (path.count + 1)...key.count { locations.append(Array(key.prefix(n))) }
            }
            for location in locations where Self.value(newData, at: location) != .absent {
                if holds(".validate", at: location) == false { return false }
            }
        }
        return true
    }
}
