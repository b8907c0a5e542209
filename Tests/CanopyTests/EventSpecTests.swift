import Canopy
import CanopyCore
import Foundation
import Testing

// Runs the scripted event spec in Fixtures/event-spec.json: every case starts from an empty
// in-memory database in manual loop mode, writes its `initial` data at the root, then performs
// its steps one by one. After each step the loop is drained and the callbacks that step caused
// (across all listeners, in delivery order) must equal the step's `expect` list exactly.
//
// File format (one JSON array of cases):
//
//   case:  { "name", "source"?, "comment"?, "skip"? ("bug: …": a known implementation bug; the case
//            still runs, its failures are reported as a known issue, and it fails once fixed),
//            "export"? (compare values in export format, priorities visible; default false),
//            "clock"? (ms since 1970 that server timestamps resolve to), "initial"? (export format),
//            "steps": [step] }
//   steps (each has "expect": [event], except in a reaction's "do"; "comment" is allowed anywhere):
//     { "listen": path, "events": [type…] | "all", "id", "query"?, "reactions"? }
//         one `observe` registration per type, in the listed order; "all" = child_added,
//         child_removed, child_changed, child_moved, value. "query" observes a query instead of
//         the plain location (see below).
//     { "once": path, "event": type, "id", "query"?, "reactions"? }      observeSingleEvent
//     { "unlisten": id, "type"?, "on"? }   removeObserver(withHandle:) for the listener's handles
//                                          (or only the one of `type`), called on the listener's
//                                          own reference, or on a fresh reference to path "on"
//     { "unlistenAll": path }              removeAllObservers() on a reference to path
//     { "set": path, "value" }                       setValue
//     { "setWithPriority": path, "value", "priority" }   setValue(_:andPriority:)
//     { "setPriority": path, "priority" }            setPriority
//     { "update": path, "values": {relative path: value} }   updateChildValues
//     { "remove": path }                             removeValue
//     { "get": path, "value", "export"? }            getData; compares the snapshot
//   Writes also take "fails": true when their completion must report an error (default: success).
//   query: { "orderByChild": path | "orderByKey": true | "orderByValue": true
//            | "orderByPriority": true,
//            "startAt"/"startAfter"/"endAt"/"endBefore"/"equalTo": bound,
//            "limitToFirst"/"limitToLast": n }
//     every field optional; bound = a value (null, boolean, number or string) or
//     {"value", "key"} for the optional child key. Applied in that order (order, start, end,
//     equalTo, limit) with the public query builders; "unlisten" without "on" removes through
//     the query.
//   reaction: { "on": {"type", "key"?, "value"?}, "do": step } — performs `do` inside the
//     listener's callback, the first time an event matching `on` reaches it.
//   event: { "at": listener id, "type", "key"?, "prev"?, "value", "export"? }
//     "key" is required for child events; for value events it defaults to the listener's key.
//     "prev" is required for child_added/changed/moved and must be absent otherwise.
//     "value" is compared with `DataSnapshot.json`, or `.exportJSON` when exporting.

struct EventSpecCase: Sendable, CustomTestStringConvertible {
    var name: String
    var source: String?
    var skip: String?
    var export = false
    var clock: Int64?
    var initial: JSONValue?
    var steps: [JSONValue] = []
    /// A problem found while loading; the case fails with it.
    var problem: String?

    var testDescription: String { self.name }

    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures").appendingPathComponent("event-spec.json")

    static let all: [EventSpecCase] = load()

    static func load() -> [EventSpecCase] {
        let document: JSONValue
        do {
            document = try JSONValue(parsing: try String(contentsOf: fixture, encoding: .utf8))
        } catch {
            return [EventSpecCase(name: "event-spec.json could not be loaded", problem: "\(fixture.path): \(error)")]
        }
        guard case .array(let items) = document else {
            return [EventSpecCase(name: "event-spec.json is not an array", problem: "the top level must be an array of cases")]
        }
        var seen = Set<String>()
        return items.enumerated().map { index, item in
            var specCase = EventSpecCase(item, index: index)
            if !seen.insert(specCase.name).inserted {
                specCase.problem = specCase.problem ?? "duplicate case name"
                specCase.name += " (case #\(index + 1))"
            }
            return specCase
        }
    }

    private init(name: String, problem: String) {
        self.name = name
        self.problem = problem
    }

    private init(_ item: JSONValue, index: Int) {
        self.name = item["name"]?.stringValue ?? "case #\(index + 1)"
        guard case .object(let fields) = item else {
            self.problem = "a case must be an object"
            return
        }
        let known: Set<String> = ["name", "source", "comment", "skip", "export", "clock", "initial", "steps"]
        if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) {
            self.problem = "unknown case field \"\(unknown)\""
        }
        if fields["name"]?.stringValue == nil { self.problem = "a case needs a string \"name\"" }
        self.source = fields["source"]?.stringValue
        self.skip = fields["skip"]?.stringValue
        self.initial = fields["initial"]
        if let export = fields["export"] {
            guard let flag = export.boolValue else {
                self.problem = "\"export\" must be a boolean"
                return
            }
            self.export = flag
        }
        if let clock = fields["clock"] {
            guard let ms = clock.int64Value else {
                self.problem = "\"clock\" must be an integer"
                return
            }
            self.clock = ms
        }
        guard let steps = fields["steps"]?.arrayValue, !steps.isEmpty else {
            self.problem = "a case needs a non-empty \"steps\" array"
            return
        }
        self.steps = steps
    }
}

@Suite("Event spec (Fixtures/event-spec.json)")
struct EventSpecTests {
    @Test("event spec", arguments: EventSpecCase.all)
    func run(_ specCase: EventSpecCase) throws {
        if let problem = specCase.problem {
            Issue.record("\(specCase.name): \(problem)")
            return
        }
        if let skip = specCase.skip {
            // Still run it, as a known issue: the console lists it, and it fails once fixed.
            withKnownIssue(Comment(rawValue: "skipped: \(skip)")) { try self.perform(specCase) }
        } else {
            try self.perform(specCase)
        }
    }

    private func perform(_ specCase: EventSpecCase) throws {
        let db = try manualDatabase(clock: specCase.clock)
        let runner = EventSpecRunner(db: db, specCase: specCase)
        withExtendedLifetime(runner) {
            runner.run()
            db.close()
        }
    }
}

@Suite("Event spec through a server (Database(url:))", .serialized)
struct RemoteEventSpecTests {
    /// The cases that do not pin the clock (server values resolve to the server's time there).
    static let cases = EventSpecCase.all.filter { $0.problem == nil && $0.skip == nil && $0.clock == nil }

    @Test("every event spec case gives the same events through a server as embedded")
    func allCases() async throws {
        #expect(Self.cases.count > 100)
        try await TestServer.serving { server in
            let url = server.url(namespace: "spec")
            try await onOwnThread {
                for specCase in Self.cases {
                    let db = try Database.remoteForTest(url)
                    // Each case starts from an empty database: clear what the previous one left.
                    try db.reference().queueRemoveValue()
                    try db.settle()
                    let runner = EventSpecRunner(db: db, specCase: specCase) { try db.settle() }
                    withExtendedLifetime(runner) {
                        runner.run()
                        db.close()
                    }
                }
            }
        }
    }
}

// MARK: - Runner

private struct EventSpecError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// One callback as delivered.
private struct EventSpecObserved {
    var at: String
    var type: DataEventType
    var key: String?
    var prev: String?
    var json: JSONValue
    var exportJSON: JSONValue
}

/// One expected callback.
private struct EventSpecExpected {
    var at: String
    var type: DataEventType
    var key: String?
    var prev: String?
    var value: JSONValue
    var export: Bool
}

private final class EventSpecListener {
    let id: String
    let ref: DatabaseReference
    /// What the listener observes: `ref` itself, or a query on it.
    let query: DatabaseQuery
    var handles: [(type: DataEventType, handle: DatabaseHandle)] = []
    var reactions: [(on: JSONValue, action: JSONValue, done: Bool)] = []

    init(id: String, ref: DatabaseReference, query: DatabaseQuery) {
        self.id = id
        self.ref = ref
        self.query = query
    }
}

/// Performs one case. Used only by the thread that drains the database, where every callback runs.
private final class EventSpecRunner {
    let db: Database
    let specCase: EventSpecCase
    var listeners: [String: EventSpecListener] = [:]
    var observed: [EventSpecObserved] = []
    /// Completion results of the current step's write: `nil` = success, else the error.
    var completions: [String?] = []
    /// Problems raised inside callbacks (bad reactions), reported after the step.
    var callbackProblems: [String] = []

    static let allTypes: [DataEventType] = [.childAdded, .childRemoved, .childChanged, .childMoved, .value]
    static let stepKinds = [
        "listen", "once", "unlisten", "unlistenAll", "set", "setWithPriority", "setPriority", "update", "remove", "get",
    ]
    static let writeKinds: Set<String> = ["set", "setWithPriority", "setPriority", "update", "remove"]
    static let allowedFields: [String: Set<String>] = [
        "listen": ["events", "id", "query", "reactions"],
        "once": ["event", "id", "query", "reactions"],
        "unlisten": ["type", "on"],
        "unlistenAll": [],
        "set": ["value", "fails"],
        "setWithPriority": ["value", "priority", "fails"],
        "setPriority": ["priority", "fails"],
        "update": ["values", "fails"],
        "remove": ["fails"],
        "get": ["value", "export"],
    ]

    /// Runs the loop until a step's work is done: a drain, or, through a server, until settled.
    let settle: () throws -> Void

    init(db: Database, specCase: EventSpecCase, settle: (() throws -> Void)? = nil) {
        self.db = db
        self.specCase = specCase
        self.settle = settle ?? { db.drain() }
    }

    func run() {
        if let initial = self.specCase.initial {
            self.db.reference().setValue(initial) { error, _ in self.completions.append(error.map { "\($0)" }) }
            do {
                try self.settle()
            } catch {
                Issue.record("\(self.specCase.name): \(error)")
                return
            }
            if self.completions != [nil] {
                Issue.record("\(self.specCase.name): writing \"initial\" failed: \(self.completions)")
                return
            }
        }
        for (index, step) in self.specCase.steps.enumerated() {
            let label = "step \(index + 1) (\(Self.summary(of: step)))"
            do {
                try self.perform(step, label: label)
            } catch {
                Issue.record("\(self.specCase.name), \(label): \(error)")
                return
            }
        }
    }

    // MARK: Steps

    private func perform(_ step: JSONValue, label: String) throws {
        let kind = try Self.kind(of: step, nested: false)
        let expectList: [JSONValue]
        if kind == "get" {
            expectList = []
        } else {
            guard let list = step["expect"]?.arrayValue else { throw EventSpecError("missing \"expect\" list") }
            expectList = list
        }
        self.observed.removeAll()
        self.completions.removeAll()
        self.callbackProblems.removeAll()

        var snapshot: DataSnapshot?
        if kind == "get" {
            self.reference(try Self.string(step, "get")).getData { _, result in snapshot = result }
        } else {
            try self.execute(step, kind: kind)
        }
        try self.settle()
        // Parsed after the step so that a listener it registers (also in a reaction) is known.
        let expected = try expectList.map { try self.expected($0) }

        for problem in self.callbackProblems {
            Issue.record("\(self.specCase.name), \(label): in a callback: \(problem)")
        }
        if Self.writeKinds.contains(kind) {
            let mustFail = step["fails"]?.boolValue ?? false
            if self.completions.count != 1 {
                Issue.record("\(self.specCase.name), \(label): the completion ran \(self.completions.count) times")
            } else if let error = self.completions[0], !mustFail {
                Issue.record("\(self.specCase.name), \(label): the write failed: \(error)")
            } else if self.completions[0] == nil && mustFail {
                Issue.record("\(self.specCase.name), \(label): the write succeeded but must fail")
            }
        }
        if kind == "get" {
            guard let snapshot else {
                Issue.record("\(self.specCase.name), \(label): getData delivered no snapshot")
                return
            }
            guard let value = step["value"] else { throw EventSpecError("\"get\" needs a \"value\"") }
            let export = step["export"]?.boolValue ?? self.specCase.export
            let actual = export ? snapshot.exportJSON : snapshot.json
            if actual != value {
                Issue.record("\(self.specCase.name), \(label): read \(actual.jsonString()), expected \(value.jsonString())")
            }
        }
        self.compare(expected, self.observed, label: label)
    }

    /// Runs a step's API call(s) without draining; also used for reactions inside callbacks,
    /// whose write completions are not recorded (`reaction`).
    private func execute(_ step: JSONValue, kind: String, reaction: Bool = false) throws {
        let completion: ((any Error)?, DatabaseReference) -> Void = { [unowned self] error, _ in
            if !reaction { self.completions.append(error.map { "\($0)" }) }
        }
        switch kind {
        case "listen", "once":
            let path = try Self.string(step, kind)
            let id = try Self.string(step, "id")
            if self.listeners[id] != nil { throw EventSpecError("listener id \"\(id)\" is used twice") }
            let types: [DataEventType]
            if kind == "once" {
                types = [try Self.eventType(try Self.string(step, "event"))]
            } else if step["events"]?.stringValue == "all" {
                types = Self.allTypes
            } else {
                guard let list = step["events"]?.arrayValue, !list.isEmpty else {
                    throw EventSpecError("\"events\" must be \"all\" or a non-empty list of event types")
                }
                types = try list.map { item in
                    guard let name = item.stringValue else { throw EventSpecError("event types are strings") }
                    return try Self.eventType(name)
                }
            }
            let ref = self.reference(path)
            let query = try step["query"].map { try Self.query($0, on: ref) } ?? ref
            let listener = EventSpecListener(id: id, ref: ref, query: query)
            for reaction in step["reactions"]?.arrayValue ?? [] {
                guard let on = reaction["on"], let action = reaction["do"] else {
                    throw EventSpecError("a reaction needs \"on\" and \"do\"")
                }
                _ = try Self.eventType(try Self.string(on, "type"))
                _ = try Self.kind(of: action, nested: true)
                listener.reactions.append((on, action, false))
            }
            self.listeners[id] = listener
            for type in types {
                let block: (DataSnapshot, String?) -> Void = { [unowned self, unowned listener] snapshot, previous in
                    self.record(listener, type, snapshot, previous)
                }
                if kind == "once" {
                    listener.query.observeSingleEvent(of: type, andPreviousSiblingKeyWith: block)
                } else {
                    listener.handles.append((type, listener.query.observe(type, andPreviousSiblingKeyWith: block)))
                }
            }
        case "unlisten":
            let id = try Self.string(step, "unlisten")
            guard let listener = self.listeners[id] else { throw EventSpecError("unknown listener \"\(id)\"") }
            guard !listener.handles.isEmpty else { throw EventSpecError("listener \"\(id)\" is a single-event observer without handle") }
            let only = try step["type"].map { value -> DataEventType in
                guard let name = value.stringValue else { throw EventSpecError("\"type\" must be a string") }
                return try Self.eventType(name)
            }
            let target =
                try step["on"].map { value -> DatabaseQuery in
                    guard let path = value.stringValue else { throw EventSpecError("\"on\" must be a path") }
                    return self.reference(path)
                } ?? listener.query
            let matching = listener.handles.filter { only == nil || $0.type == only }
            if matching.isEmpty { throw EventSpecError("listener \"\(id)\" has no \(only.map(\.description) ?? "") registration") }
            for entry in matching { target.removeObserver(withHandle: entry.handle) }
        case "unlistenAll":
            self.reference(try Self.string(step, "unlistenAll")).removeAllObservers()
        case "set":
            guard let value = step["value"] else { throw EventSpecError("\"set\" needs a \"value\"") }
            self.reference(try Self.string(step, "set")).setValue(value, withCompletionBlock: completion)
        case "setWithPriority":
            guard let value = step["value"], let priority = step["priority"] else {
                throw EventSpecError("\"setWithPriority\" needs a \"value\" and a \"priority\"")
            }
            self.reference(try Self.string(step, "setWithPriority")).setValue(value, andPriority: priority, withCompletionBlock: completion)
        case "setPriority":
            guard let priority = step["priority"] else { throw EventSpecError("\"setPriority\" needs a \"priority\"") }
            self.reference(try Self.string(step, "setPriority")).setPriority(priority, withCompletionBlock: completion)
        case "update":
            guard let values = step["values"]?.objectValue else { throw EventSpecError("\"update\" needs a \"values\" object") }
            var dictionary: [AnyHashable: Any] = [:]
            for (key, value) in values { dictionary[key] = value }
            self.reference(try Self.string(step, "update")).updateChildValues(dictionary, withCompletionBlock: completion)
        case "remove":
            self.reference(try Self.string(step, "remove")).removeValue(completionBlock: completion)
        default:
            throw EventSpecError("\"\(kind)\" cannot be performed here")
        }
    }

    private func record(_ listener: EventSpecListener, _ type: DataEventType, _ snapshot: DataSnapshot, _ previous: String?) {
        self.observed.append(
            EventSpecObserved(
                at: listener.id, type: type, key: snapshot.key, prev: previous, json: snapshot.json, exportJSON: snapshot.exportJSON)
        )
        for i in listener.reactions.indices where !listener.reactions[i].done {
            let on = listener.reactions[i].on
            guard on["type"]?.stringValue == type.description else { continue }
            if let key = on["key"], key != (snapshot.key.map(JSONValue.string) ?? .null) { continue }
            if let value = on["value"], value != snapshot.json { continue }
            listener.reactions[i].done = true
            let action = listener.reactions[i].action
            do {
                try self.execute(action, kind: try Self.kind(of: action, nested: true), reaction: true)
            } catch {
                self.callbackProblems.append("reaction of \(listener.id): \(error)")
            }
        }
    }

    private func reference(_ path: String) -> DatabaseReference {
        self.db.reference(withPath: path)
    }

    // MARK: Expectations

    private func expected(_ item: JSONValue) throws -> EventSpecExpected {
        guard case .object(let fields) = item else { throw EventSpecError("an expected event must be an object") }
        let known: Set<String> = ["at", "type", "key", "prev", "value", "export", "comment"]
        if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) {
            throw EventSpecError("unknown event field \"\(unknown)\" in \(item.jsonString())")
        }
        let at = try Self.string(item, "at")
        let type = try Self.eventType(try Self.string(item, "type"))
        guard let value = fields["value"] else { throw EventSpecError("an expected event needs a \"value\": \(item.jsonString())") }
        let key: String?
        switch fields["key"] {
        case .some(.string(let s)): key = s
        case .some(.null): key = nil
        case .some: throw EventSpecError("\"key\" must be a string or null")
        case .none:
            guard type == .value else { throw EventSpecError("child events need a \"key\": \(item.jsonString())") }
            guard let listener = self.listeners[at] else {
                throw EventSpecError("unknown listener \"\(at)\" (register it before expecting its value events without \"key\")")
            }
            key = listener.ref.key
        }
        let prev: String?
        switch (type, fields["prev"]) {
        case (.childAdded, let p?), (.childChanged, let p?), (.childMoved, let p?):
            switch p {
            case .string(let s): prev = s
            case .null: prev = nil
            default: throw EventSpecError("\"prev\" must be a string or null")
            }
        case (.childAdded, nil), (.childChanged, nil), (.childMoved, nil):
            throw EventSpecError("\(type) events need a \"prev\" (null when first): \(item.jsonString())")
        case (_, nil):
            prev = nil
        case (_, _?):
            throw EventSpecError("\(type) events have no \"prev\": \(item.jsonString())")
        }
        let export = fields["export"]?.boolValue ?? self.specCase.export
        return EventSpecExpected(at: at, type: type, key: key, prev: prev, value: value, export: export)
    }

    private func compare(_ expected: [EventSpecExpected], _ actual: [EventSpecObserved], label: String) {
        var matches = expected.count == actual.count
        if matches {
            for (e, a) in zip(expected, actual) {
                let value = e.export ? a.exportJSON : a.json
                if e.at != a.at || e.type != a.type || e.key != a.key || e.prev != a.prev || e.value != value {
                    matches = false
                    break
                }
            }
        }
        guard !matches else { return }
        let fallbackExport = self.specCase.export
        let expectedLines = expected.map { Self.render(at: $0.at, $0.type, $0.key, $0.prev, $0.value) }
        let actualLines = actual.enumerated().map { i, a in
            let export = i < expected.count ? expected[i].export : fallbackExport
            return Self.render(at: a.at, a.type, a.key, a.prev, export ? a.exportJSON : a.json)
        }
        var message = "\(self.specCase.name), \(label): events differ\n  expected (\(expected.count)):\n"
        message += expectedLines.isEmpty ? "    (nothing)\n" : expectedLines.map { "    \($0)\n" }.joined()
        message += "  actual (\(actual.count)):\n"
        for (i, line) in actualLines.enumerated() {
            let same = i < expectedLines.count && expectedLines[i] == line
            message += "  \(same ? " " : "≠") \(line)\n"
        }
        if actualLines.isEmpty { message += "    (nothing)\n" }
        if let source = self.specCase.source { message += "  source: \(source)\n" }
        Issue.record(Comment(rawValue: String(message.dropLast())))
    }

    private static func render(at: String, _ type: DataEventType, _ key: String?, _ prev: String?, _ value: JSONValue) -> String {
        var line = "\(at) \(type) \(key.map { "\"\($0)\"" } ?? "null")"
        switch type {
        case .childAdded, .childChanged, .childMoved: line += " (prev \(prev.map { "\"\($0)\"" } ?? "null"))"
        case .childRemoved, .value: if let prev { line += " (prev \"\(prev)\"!)" }
        }
        return line + " " + value.jsonString()
    }

    // MARK: Format helpers

    static let queryFields: Set<String> = [
        "orderByChild", "orderByKey", "orderByValue", "orderByPriority",
        "startAt", "startAfter", "endAt", "endBefore", "equalTo", "limitToFirst", "limitToLast",
    ]

    /// The query a listener's `"query"` object describes, built on `ref` with the public API.
    private static func query(_ spec: JSONValue, on ref: DatabaseReference) throws -> DatabaseQuery {
        guard case .object(let fields) = spec else { throw EventSpecError("\"query\" must be an object") }
        if let unknown = fields.keys.sorted().first(where: { !self.queryFields.contains($0) }) {
            throw EventSpecError("unknown query field \"\(unknown)\"")
        }
        var query: DatabaseQuery = ref
        if let child = fields["orderByChild"] {
            guard let path = child.stringValue else { throw EventSpecError("\"orderByChild\" must be a path") }
            query = query.queryOrdered(byChild: path)
        }
        let orders = [
            ("orderByKey", DatabaseQuery.queryOrderedByKey),
            ("orderByValue", DatabaseQuery.queryOrderedByValue),
            ("orderByPriority", DatabaseQuery.queryOrderedByPriority),
        ]
        for (field, order) in orders {
            guard let flag = fields[field] else { continue }
            guard flag.boolValue == true else { throw EventSpecError("\"\(field)\" must be true") }
            query = order(query)()
        }
        let bounds: [(String, (DatabaseQuery) -> (Any?, String?) -> DatabaseQuery)] = [
            ("startAt", DatabaseQuery.queryStarting(atValue:childKey:)),
            ("startAfter", DatabaseQuery.queryStarting(afterValue:childKey:)),
            ("endAt", DatabaseQuery.queryEnding(atValue:childKey:)),
            ("endBefore", DatabaseQuery.queryEnding(beforeValue:childKey:)),
            ("equalTo", DatabaseQuery.queryEqual(toValue:childKey:)),
        ]
        for (field, constrain) in bounds {
            guard let bound = fields[field] else { continue }
            let (value, key) = try self.bound(bound, field)
            query = constrain(query)(value, key)
        }
        for (field, first) in [("limitToFirst", true), ("limitToLast", false)] {
            guard let limit = fields[field] else { continue }
            guard let n = limit.int64Value, n > 0, let count = UInt(exactly: n) else {
                throw EventSpecError("\"\(field)\" must be a positive integer")
            }
            query = first ? query.queryLimited(toFirst: count) : query.queryLimited(toLast: count)
        }
        return query
    }

    /// A query bound: a plain value, or `{"value", "key"}`; the value as the builders take it.
    private static func bound(_ bound: JSONValue, _ field: String) throws -> (Any?, String?) {
        var value = bound
        var key: String?
        if case .object(let parts) = bound {
            guard let v = parts["value"], parts.keys.allSatisfy({ $0 == "value" || $0 == "key" }) else {
                throw EventSpecError("\"\(field)\" must be a value or {\"value\", \"key\"}")
            }
            value = v
            if let k = parts["key"] {
                guard let s = k.stringValue else { throw EventSpecError("the key of \"\(field)\" must be a string") }
                key = s
            }
        }
        switch value {
        case .null: return (nil, key)
        case .bool(let b): return (b, key)
        case .int(let i): return (Int(i), key)
        case .double(let d): return (d, key)
        case .string(let s): return (s, key)
        case .array, .object:
            throw EventSpecError("the value of \"\(field)\" must be null, a boolean, a number or a string")
        }
    }

    private static func kind(of step: JSONValue, nested: Bool) throws -> String {
        guard case .object(let fields) = step else { throw EventSpecError("a step must be an object") }
        let kinds = self.stepKinds.filter { fields[$0] != nil }
        guard kinds.count == 1, let kind = kinds.first else {
            throw EventSpecError("a step needs exactly one of \(self.stepKinds.joined(separator: ", ")): \(step.jsonString())")
        }
        var allowed = self.allowedFields[kind, default: []].union([kind, "comment"])
        if !nested && kind != "get" { allowed.insert("expect") }
        if let unknown = fields.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw EventSpecError("unknown field \"\(unknown)\" in a \(kind) step\(nested ? " inside a reaction" : "")")
        }
        if nested && kind == "get" { throw EventSpecError("\"get\" cannot be a reaction") }
        return kind
    }

    private static func string(_ object: JSONValue, _ field: String) throws -> String {
        guard let value = object[field]?.stringValue else { throw EventSpecError("\"\(field)\" must be a string") }
        return value
    }

    private static func eventType(_ name: String) throws -> DataEventType {
        guard let type = DataEventType.allCases.first(where: { $0.description == name }) else {
            throw EventSpecError("unknown event type \"\(name)\"")
        }
        return type
    }

    private static func summary(of step: JSONValue) -> String {
        guard case .object(let fields) = step, let kind = self.stepKinds.first(where: { fields[$0] != nil }) else { return "?" }
        var text = "\(kind) \(fields[kind]?.stringValue ?? fields[kind]?.jsonString() ?? "")"
        if let value = fields["value"], kind != "get" { text += " = \(value.jsonString())" }
        if let priority = fields["priority"] { text += " priority \(priority.jsonString())" }
        if let values = fields["values"] { text += " \(values.jsonString())" }
        if let query = fields["query"] { text += " query \(query.jsonString())" }
        if let type = fields["type"]?.stringValue { text += " \(type)" }
        if let on = fields["on"]?.stringValue { text += " on \(on)" }
        if let comment = fields["comment"]?.stringValue { text += " — \(comment)" }
        return text
    }
}
