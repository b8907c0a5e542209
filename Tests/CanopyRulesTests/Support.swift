import CanopyCore
import CanopyRules
import Foundation

/// Parses strict JSON text into a `JSONValue`.
func json(_ text: String) -> JSONValue {
    var builder = JSONValueBuilder()
    do { return try JSONParser().parse(text, into: &builder) } catch { fatalError("bad JSON in a test: \(error)\n\(text)") }
}

/// The node of a JSON value: objects become children, arrays index keys, nulls and empty
/// objects nothing; `{".sv": "timestamp"}` becomes `now`.
func node(_ value: JSONValue, now: Int64 = 0) -> Node {
    switch value {
    case .null: return .empty
    case .bool(let b): return .leaf(.bool(b))
    case .int(let i): return .leaf(.int(i))
    case .double(let d): return .leaf(.double(d))
    case .string(let s): return .leaf(.string(s))
    case .array(let a):
        var n = Node.empty
        for (i, v) in a.enumerated() { n.setChild(ChildKey(index: i), to: node(v, now: now)) }
        return n
    case .object(let o):
        if o == [".sv": "timestamp"] { return .leaf(.int(now)) }
        var n = Node.empty
        for (k, v) in o { n.setChild(ChildKey(k), to: node(v, now: now)) }
        return n
    }
}

/// A path from a string like `/a/b` (no validation: tests use valid keys).
func path(_ string: String) -> DatabasePath {
    DatabasePath(string.split(separator: "/").map { ChildKey(String($0)) })
}

/// A rules document from a rules object (the value of `"rules"`).
func document(rules: JSONValue) throws -> RulesDocument {
    try RulesDocument(parsing: "{\"rules\": \(text(rules))}")
}

/// Strict JSON text of a value (keys sorted, for stable documents).
func text(_ value: JSONValue) -> String {
    switch value {
    case .null: return "null"
    case .bool(let b): return b ? "true" : "false"
    case .int(let i): return String(i)
    case .double(let d): return String(d)
    case .string(let s):
        let data = try! JSONSerialization.data(withJSONObject: [s], options: [.fragmentsAllowed])
        let array = String(decoding: data, as: UTF8.self)
        return String(array.dropFirst().dropLast())
    case .array(let a): return "[" + a.map(text).joined(separator: ",") + "]"
    case .object(let o): return "{" + o.keys.sorted().map { text(.string($0)) + ":" + text(o[$0]!) }.joined(separator: ",") + "}"
    }
}

/// The contents of a fixture next to this file.
func fixture(_ name: String) -> JSONValue {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").appendingPathComponent(name)
    guard let data = try? Data(contentsOf: url) else { fatalError("missing fixture \(name)") }
    return json(String(decoding: data, as: UTF8.self))
}

extension JSONValue {
    subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    var arrayValue: [JSONValue] {
        if case .array(let a) = self { return a }
        return []
    }
}
