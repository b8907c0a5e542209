import Canopy
import Foundation
import Testing

@Suite("JSON import and export")
final class ImportExportTests: ManualDatabaseSuite {
    init() throws { try super.init(clock: 1_700_000_000_000) }

    private func read(_ db: Database, _ path: String, export: Bool = true) -> JSONValue {
        var value: JSONValue = .null
        db.reference(withPath: path).getData { _, snapshot in value = (export ? snapshot?.exportJSON : snapshot?.json) ?? .null }
        db.drain()
        return value
    }

    @Test("export then import restores the same tree, priorities included")
    func roundTrip() throws {
        let original: JSONValue = [
            "users": ["ada": ["name": "Ada", "age": 36, ".priority": 1], "grace": ["name": "Grace", "langs": ["COBOL", "FLOW-MATIC"]]],
            "n": [".value": 3.5, ".priority": "p"], "big": .int(Int64.max), "t": true, "unicode": "日本語 🎉 \"q\"\n",
        ]
        try db.reference().queueImportJSON(original.jsonString())
        db.drain()
        let exported = self.read(db, "/")
        #expect(exported == original.exportNormalized)
        var text = ""
        db.reference().getData { _, snapshot in text = snapshot?.jsonString(exportFormat: true) ?? "" }
        db.drain()
        let copy = try manualDatabase(clock: 1_700_000_000_000)
        defer { copy.close() }
        try copy.reference().queueImportJSON(text)
        copy.drain()
        #expect(self.read(copy, "/") == exported)
        // The plain form reads arrays back as arrays.
        #expect(self.read(db, "users/grace/langs", export: false) == ["COBOL", "FLOW-MATIC"])
    }

    @Test(
        "duplicate keys: the last one wins, as JSON.parse does",
        arguments: [
            (#"{"a":1,"a":2}"#, ["a": 2] as JSONValue),
            (#"{"a":1,"a":null,"b":1}"#, ["b": 1] as JSONValue),
            (#"{"a":null,"a":1}"#, ["a": 1] as JSONValue),
            (#"{"b":{"x":1},"a":0,"b":{"y":2}}"#, ["a": 0, "b": ["y": 2]] as JSONValue),
        ])
    func duplicateKeys(text: String, expected: JSONValue) throws {
        try db.reference(withPath: "d").queueImportJSON(text)
        db.drain()
        #expect(self.read(db, "d") == expected)
    }

    @Test("server values and other unusual input take the exact path")
    func serverValues() throws {
        try db.reference(withPath: "s").queueImportJSON(#"{"at":{".sv":"timestamp"},"n":{".value":1,".priority":{".sv":"timestamp"}}}"#)
        db.drain()
        #expect(self.read(db, "s") == ["at": 1_700_000_000_000, "n": [".value": 1, ".priority": 1_700_000_000_000]])
    }

    @Test(
        "bad input gets a clear error and writes nothing",
        arguments: [
            ("{\"a\":1,}", "invalid_json", "line 1, column 8"),
            ("{\"a\": [1, 2", "invalid_json", "end of input"),
            (#"{"a.b":1}"#, "invalid_key", "(a.b)"),
            (#"{"a":{"$x":1}}"#, "invalid_key", "at /i/a"),
            (#"{"x":{".value":{"y":1}}}"#, "invalid_value", ".value"),
            (#"{"p":{".sv":"nonsense"}}"#, "invalid_value", "server value"),
        ])
    func badInput(text: String, code: String, fragment: String) throws {
        try db.reference(withPath: "i").queueSetValue(["keep": 1])
        db.drain()
        do {
            try db.reference(withPath: "i").queueImportJSON(text)
            Issue.record("\(text) was accepted")
        } catch let error as DatabaseError {
            #expect(error.code.name == code)
            #expect(error.message.contains(fragment), "\(error.message)")
        }
        db.drain()
        #expect(self.read(db, "i") == ["keep": 1])
    }

    @Test("a deep document over the 32-level limit is refused with the depth message")
    func tooDeep() throws {
        let text = String(repeating: "{\"k\":", count: 33) + "1" + String(repeating: "}", count: 33)
        #expect(throws: DatabaseError.self) { try db.reference().queueImportJSON(text) }
        let ok = String(repeating: "{\"k\":", count: 32) + "1" + String(repeating: "}", count: 32)
        try db.reference().queueImportJSON(ok)
        db.drain()
        #expect(self.read(db, "/") != .null)
    }
}

extension JSONValue {
    /// The export form a tree stores: arrays as objects keyed "0", "1", ….
    var exportNormalized: JSONValue {
        switch self {
        case .array(let a):
            var o: [String: JSONValue] = [:]
            for (i, v) in a.enumerated() where v != .null { o[String(i)] = v.exportNormalized }
            return .object(o)
        case .object(let o): return .object(o.mapValues(\.exportNormalized))
        default: return self
        }
    }
}
